"""`stallscan sessions`: every session with its harness, start, human turns, silent endings, the records that
start a request and how many of those the router misreads."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _err_console, _guard, open_db, out_format, scope_sessions
from .options import Config, Db, Harnesses, Json, Limit, Models, RetryBound, Since, Threshold, Until

SORTS = ("start", "id", "harness", "turns", "silent", "requests", "misread", "events")

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def sessions(
    db: Db = None,
    sort: str = typer.Option("start", "--sort", metavar="<" + "|".join(SORTS) + ">", help="Sort key."),
    desc: bool = typer.Option(False, "--desc", help="Largest (or latest) first."),
    harness: Harnesses = None,
    model: Models = None,
    since: Since = None,
    until: Until = None,
    limit: Limit = 0,
    config: Config = None,
    threshold: Threshold = GAP_THRESHOLD_S,
    retry_bound: RetryBound = RETRY_BOUND,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
) -> None:
    """List sessions: the id `show` accepts, harness, start, human turns, silent endings, requests, misread."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.replay.stalls import replay_stalls
    from stallscan.report.fit import Col, fit_table
    from stallscan.report.timeline import session_refs
    from stallscan.store import sql

    out = out_format(out, as_json, ("table", "json"))
    if sort not in SORTS:
        raise StallscanError(f"unknown --sort {sort!r}", hint="one of: " + ", ".join(SORTS))
    if limit < 0:
        raise StallscanError("--limit must be >= 0 (0: all)", hint="e.g. --limit 20")
    if threshold < 0 or retry_bound < 0:
        raise StallscanError("--threshold and --retry-bound must be >= 0", hint="e.g. --threshold 2")
    con = open_db(db)
    scoped = scope_sessions(con, since, until, harness, model)
    wanted = {r[0] for r in con.execute("SELECT session_id FROM scope_sessions").fetchall()} if scoped else None
    label_events(con, config)
    replay_boundaries(con, threshold, summary=False)
    replay_stalls(con, retry_bound=retry_bound, config=config)
    cur = sql.query(con, "report/sessions_list")
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    refs = session_refs(con, [r["session_id"] for r in rows])
    con.close()
    rows = [r for r in rows if wanted is None or r["session_id"] in wanted]
    key = {"id": "session_id"}.get(sort, sort)
    rows.sort(key=lambda r: (r[key] is None, r[key] if r[key] is not None else 0, r["session_id"]), reverse=desc)
    if limit:
        rows = rows[:limit]
    for r in rows:
        r["ref"] = refs[r["session_id"]]
        for k in ("start", "last"):
            r[k] = r[k].isoformat() if r[k] is not None else None
    if out == "json":
        sys.stdout.write(json.dumps({"threshold": threshold, "sessions": rows}, indent=1) + "\n")
        return
    table = [
        [
            r["ref"],
            r["harness"],
            (r["start"] or "-")[:16].replace("T", " "),
            f"{r['turns']:,}",
            f"{r['silent']:,}",
            f"{r['requests']:,}",
            f"{r['misread']:,}",
            f"{r['events']:,}",
            r["model"] or "-",
        ]
        for r in rows
    ]
    spec = [
        Col("session", "id", 99),
        Col("harness", "id", 80),
        Col("start (UTC)", "id", 85),
        Col("human turns", keep=90),
        Col("silent", keep=95),
        Col("requests", keep=93),
        Col("misread", keep=95),
        Col("events", keep=40),
        Col("model", "text", 30, min=8, max=30),
    ]
    Console().print(fit_table(spec, table, styles=[("bold" if r["silent"] or r["misread"] else None) for r in rows]))
    _err_console().print(
        f"{len(rows):,} session(s); open one with: stallscan show SESSION (the first column)\n" + LEGEND,
        highlight=False,
    )


# what each count counts (issue 23): misread is a share of requests, silent a share of human turns. The two
# populations differ: a person's words inside a harness envelope or a tool result are requests (and may be
# misread) but open no turn; a local command (/clear) opens a turn but sends no request
LEGEND = (
    "human turns: the stall replay's turns, each opened by a person's record (silent: of them, ending in a "
    "plan-as-answer); requests: user-role records that start a model request (prompts, automatic prompts, "
    "tool results); misread: of the requests, those the router reads wrong"
)
