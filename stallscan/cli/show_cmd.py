"""`stallscan show SESSION`."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.replay.boundaries_ref import GAP_THRESHOLD_S
from stallscan.replay.stall_rules import RETRY_BOUND
from stallscan.store.errors import StallscanError

from ._lazy import Console
from .common import _guard, open_db, out_format
from .options import Config, Db, Json, RetryBound, Threshold

app = typer.Typer()  # this module's commands (stallscan.cli.COMMANDS names it)


@app.command()
@_guard
def show(
    session: str = typer.Argument(..., metavar="SESSION", help="Session id, or the short id other commands print."),
    db: Db = None,
    threshold: Threshold = GAP_THRESHOLD_S,
    retry_bound: RetryBound = RETRY_BOUND,
    flagged_only: bool = typer.Option(False, "--flagged", help="Only misread turns and stalls, 3 events either side."),
    around: int | None = typer.Option(
        None, "--around", metavar="SEQ", help="Only the 3 events either side of the event with this seq."
    ),
    config: Config = None,
    out: str = typer.Option("table", "--format", metavar="<table|json>", help="Output format."),
    as_json: Json = False,
) -> None:
    """A session's timeline: time, gap, role, origin, decision, round kind, flags, excerpts."""
    from stallscan.report.timeline import focus, timeline, timeline_table

    out = out_format(out, as_json, ("table", "json"))
    if threshold < 0 or retry_bound < 0:
        raise StallscanError("--threshold and --retry-bound must be >= 0", hint="e.g. --threshold 2")
    con = open_db(db)
    sid, rows = timeline(con, session, threshold, retry_bound, config)
    con.close()
    rows = focus(rows, flagged_only, around)
    if out == "json":
        sys.stdout.write(json.dumps({"session_id": sid, "events": rows}, indent=1, default=str) + "\n")
    else:
        Console().print(timeline_table(sid, rows))
