"""`stallscan stalls`: replay the stall logic and list stalled rounds (silent plan-as-answer first)."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.replay.stall_rules import NARRATED_BOUND, RETRY_BOUND
from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _err_console, _guard, open_db, out_format, scope_sessions
from .options import Config, Db, Harnesses, Json, Limit, Models, NarratedBound, RetryBound, Since, Until

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def stalls(
    outcome: list[str] | None = typer.Option(
        None,
        "--outcome",
        metavar="<silent|exhausted|abandoned|recovered|answered>",
        help="Only this outcome (repeatable).",
    ),
    session: str | None = typer.Option(None, "--session", metavar="ID", help="Only this session (id or short id)."),
    retry_bound: RetryBound = RETRY_BOUND,
    narrated_bound: NarratedBound = NARRATED_BOUND,
    harness: Harnesses = None,
    model: Models = None,
    since: Since = None,
    until: Until = None,
    limit: Limit = 50,
    config: Config = None,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
    db: Db = None,
) -> None:
    """Replay every assistant round through the stall rules and list the stalls."""
    from stallscan.replay.stall_data import measured_precision, precision_line
    from stallscan.replay.stalls import OUTCOME_ALIASES, OUTCOMES, bound_sweep, list_stalls, replay_stalls
    from stallscan.report.fit import Col, fit_table
    from stallscan.report.timeline import resolve_session, session_refs

    out = out_format(out, as_json, ("table", "json"))
    if retry_bound < 0 or narrated_bound < 0 or limit < 0:
        raise StallscanError("--retry-bound, --narrated-bound and --limit must be >= 0", hint="e.g. --retry-bound 3")
    wanted = [OUTCOME_ALIASES.get(o, o) for o in (outcome or [])]
    for o in wanted:
        if o not in OUTCOMES:
            raise StallscanError(f"unknown --outcome {o!r}", hint="one of: silent, " + ", ".join(OUTCOMES[1:]))
    con = open_db(db)
    if session:
        session = resolve_session(con, session)
    scoped = scope_sessions(con, since, until, harness, model)
    info = replay_stalls(con, retry_bound=retry_bound, narrated_bound=narrated_bound, config=config)
    rows = list_stalls(con, outcome=wanted or None, session=session, scoped=scoped, limit=limit or None)
    sweep = bound_sweep(con, [retry_bound], scoped=scoped)[0]
    refs = session_refs(con, [r["session_id"] for r in rows])
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
    table = []
    for r in rows:
        ts = r["ts"].isoformat()[:16].replace("T", " ") if r["ts"] else "-"
        text = " ".join((r["excerpt"] or "").split())
        table.append(
            [
                ("silent" if r["outcome"] == "silent_plan_as_answer" else r["outcome"])
                + (" *" if r["delivered"] else ""),
                refs[r["session_id"]],
                str(r["turn_id"]),
                ts,
                f"{r['round_kind']} / {r['signature'] or '-'}",
                r["finish_reason"] or "null",
                f"{r['stall_index']} → {r['would_do']}",
                "yes" if r["nudged"] else "no",
                text if len(text) <= 120 else "…" + text[-119:],
            ]
        )
    spec = [
        Col("outcome", "id", 99),
        Col("session", "id", 98),
        Col("turn", keep=80),
        Col("time (UTC)", "id", 50),
        Col("kind / signature", "text", 70, min=10, max=36),
        Col("finish", "id", 40),
        Col("idx → do", "id", 60),
        Col("nudged", "id", 55),
        Col("narration", "text", 75, min=14, max=60),
    ]
    console = Console()
    console.print(
        fit_table(
            spec,
            table,
            title=f"stalls ({len(rows)} shown; retry bound {info.retry_bound}, narrated bound "
            f"{info.narrated_bound}, turns from {info.segmentation})",
        )
    )
    console.print(
        f"* = delivered as the turn's answer. With retry bound {retry_bound}: "
        f"{sweep['would_reprompt']} plan ending(s) would be re-prompted instead, "
        f"{sweep['would_deliver']} recovery(ies) would end as a plan instead "
        f"(of {sweep['plan_endings']} plan endings logged).",
        highlight=False,
    )
    console.print(precision_line(measured_precision()), highlight=False)
