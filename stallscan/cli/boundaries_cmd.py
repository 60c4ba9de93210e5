"""`stallscan boundaries`: list the replayed turn-boundary decisions."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _err_console, _guard, open_db, out_format, scope_sessions
from .options import Config, Db, Harnesses, Json, Limit, Models, Since, Threshold, Until

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def boundaries(
    db: Db = None,
    threshold: Threshold = GAP_THRESHOLD_S,
    session: str | None = typer.Option(
        None, "--session", metavar="ID", help="Only this session (id or unique prefix; its sidechains too)."
    ),
    errors_only: bool = typer.Option(False, "--errors-only", help="Only misread turns."),
    show_all: bool = typer.Option(False, "--all", help="Also plain tool results and records that are not requests."),
    harness: Harnesses = None,
    model: Models = None,
    since: Since = None,
    until: Until = None,
    limit: Limit = 0,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
    config: Config = None,
) -> None:
    """Replay the router's turn-boundary decision for every user turn and list it next to who really wrote it."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.report.fit import Col, fit_table
    from stallscan.report.timeline import resolve_session, session_refs
    from stallscan.store import sql

    out = out_format(out, as_json, ("table", "json"))
    if limit < 0:
        raise StallscanError("--limit must be >= 0 (0: all)", hint="e.g. --limit 50")
    con = open_db(db)
    if session:
        session = resolve_session(con, session)
    scoped = scope_sessions(con, since, until, harness, model)
    kept = [r[0] for r in con.execute("SELECT session_id FROM scope_sessions").fetchall()] if scoped else None
    label_events(con, config)
    summary = replay_boundaries(con, threshold)
    params = {"session": session, "errors_only": errors_only, "all": show_all, "sessions": kept, "limit": limit or None}
    cur = sql.query(con, "report/boundaries_list", params)
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    counts = dict(
        zip(
            ("records", "misread", "prompts", "tool_results"),
            sql.first(sql.query(con, "report/misread_counts")) or (0, 0, 0, 0),
        )
    )
    refs = session_refs(con, [r["session_id"] for r in rows])
    con.close()
    if out == "json":
        for r in rows:
            r["ts"] = r["ts"].isoformat() if r["ts"] is not None else None
        sys.stdout.write(
            json.dumps(
                {"threshold": threshold, "counts": summary, "misread": counts, "decisions": rows}, indent=2, default=str
            )
            + "\n"
        )
        return
    table_rows, styles = [], []
    for r in rows:
        err = r["error"]
        table_rows.append(
            [
                refs[r["session_id"]],
                str(r["line"]),
                (r["ts"].isoformat()[:19].replace("T", " ") if r["ts"] else "-"),
                "-" if r["gap_s"] is None else f"{r['gap_s']:.2f}",
                r["prev_reply_status"] or "-",
                r["initiator"] or "-",
                r["decided_by"],
                r["decision"] or "-",
                r["truth"],
                f"{r['truth_note']}: {r['origin_rule']}" if r["truth_note"] else r["origin_rule"],
                "" if err == "none" else err.replace("_as_", " as "),
                r["excerpt"],
            ]
        )
        styles.append("bold red" if err in ("auto_as_human", "human_as_auto") else None)
    spec = [
        Col("session", "id", 95),
        Col("line", keep=70),
        Col("time (UTC)", "id", 30),
        Col("gap s", keep=90),
        Col("prev reply", "id", 50),
        Col("hdr", "id", 20),
        Col("decided by", "id", 75),
        Col("decision", "id", 85),
        Col("truth", "id", 88),
        Col("rule", "text", 40, min=10, max=30),
        Col("error", "id", 92),
        Col("excerpt", "text", 60, min=12, max=60),
    ]
    Console().print(fit_table(spec, table_rows, title=f"turn boundaries at {threshold:g} s", styles=styles))
    shown_err = sum(1 for r in rows if r["error"] in ("auto_as_human", "human_as_auto"))
    _err_console().print(
        f"{len(rows):,} row(s) shown, {shown_err:,} of them misread. In all, {counts['misread']:,} misread turns of "
        f"{counts['records']:,} records that start a request: {counts['prompts']:,} prompts (what `sweep` scores) "
        f"+ {counts['tool_results']:,} tool results (listed with --all or --errors-only)",
        highlight=False,
    )
