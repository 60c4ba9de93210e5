"""`stallscan stalls`: replay the stall logic and list stalled rounds (silent plan-as-answer first)."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.store.errors import StallscanError

from . import DbOpt, _err_console, _guard, app
from ._lazy import Console, Table, connect, default_db_path


@app.command()
@_guard
def stalls(
    outcome: list[str] | None = typer.Option(
        None, "--outcome", help="silent | exhausted | abandoned | recovered | answered (repeatable)."
    ),
    session: str | None = typer.Option(None, "--session", help="Only this session id."),
    retry_bound: int = typer.Option(
        3, "--retry-bound", min=0, help="Consecutive stalls re-prompted before delivering."
    ),
    narrated_bound: int = typer.Option(2, "--narrated-bound", min=0, help="Narrated-intent re-prompts per turn."),
    limit: int = typer.Option(50, "--limit", help="Rows to list (0 = all)."),
    out: str = typer.Option("table", "--format", help="table or json."),
    db: str | None = DbOpt,
) -> None:
    """Replay every assistant round through the stall rules and list the stalls."""
    from stallscan.replay.stall_data import measured_precision, precision_line
    from stallscan.replay.stalls import OUTCOME_ALIASES, OUTCOMES, bound_sweep, list_stalls, replay_stalls

    if out not in ("table", "json"):
        raise StallscanError(f"unknown --format {out!r}", hint="table or json")
    wanted = [OUTCOME_ALIASES.get(o, o) for o in (outcome or [])]
    for o in wanted:
        if o not in OUTCOMES:
            raise StallscanError(f"unknown --outcome {o!r}", hint="one of: silent, " + ", ".join(OUTCOMES[1:]))
    con = connect(db or default_db_path())
    info = replay_stalls(con, retry_bound=retry_bound, narrated_bound=narrated_bound)
    rows = list_stalls(con, outcome=wanted or None, session=session, limit=limit or None)
    sweep = bound_sweep(con, [retry_bound])[0]
    con.close()
    if session and not rows:
        _err_console().print(f"no stalls in session {session}", highlight=False)
    if out == "json":
        payload = {
            "retry_bound": info.retry_bound,
            "narrated_bound": info.narrated_bound,
            "segmentation": info.segmentation,
            "data_version": info.data_version,
            "endings_changed_by_bound": sweep,
            "precision": measured_precision(),
            "stalls": [{k: (v.isoformat() if hasattr(v, "isoformat") else v) for k, v in r.items()} for r in rows],
        }
        sys.stdout.write(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
        return
    t = Table(
        title=f"stalls ({len(rows)} shown; retry bound {info.retry_bound}, narrated bound "
        f"{info.narrated_bound}, turns from {info.segmentation})",
        title_justify="left",
    )
    for c, w in (
        ("outcome", 12),
        ("session #turn", 22),
        ("time", 17),
        ("kind / signature", 36),
        ("finish", 10),
        ("idx → do", 13),
        ("nudged", 6),
        ("narration", 50),
    ):
        t.add_column(c, overflow="ellipsis", max_width=w, no_wrap=c != "narration")
    for r in rows:
        ts = r["ts"].isoformat()[:16].replace("T", " ") + "Z" if r["ts"] else "-"
        text = " ".join((r["excerpt"] or "").split())
        t.add_row(
            ("silent" if r["outcome"] == "silent_plan_as_answer" else r["outcome"]) + (" *" if r["delivered"] else ""),
            f"{r['session_id']} #{r['turn_id']}",
            ts,
            f"{r['round_kind']} / {r['signature'] or '-'}",
            r["finish_reason"] or "null",
            f"{r['stall_index']} → {r['would_do']}",
            "yes" if r["nudged"] else "no",
            text if len(text) <= 120 else "…" + text[-119:],
        )
    console = Console()
    console.print(t)
    console.print(
        f"* = delivered as the turn's answer. With retry bound {retry_bound}: "
        f"{sweep['would_reprompt']} plan ending(s) would be re-prompted instead, "
        f"{sweep['would_deliver']} recovery(ies) would end as a plan instead "
        f"(of {sweep['plan_endings']} plan endings logged).",
        highlight=False,
    )
    console.print(precision_line(measured_precision()), highlight=False)
