"""`stallscan show SESSION`."""

from __future__ import annotations

import json
import sys

import typer

from . import DbOpt, _guard, app
from ._lazy import Console, connect, default_db_path


@app.command()
@_guard
def show(
    session: str = typer.Argument(..., help="Session id (or a unique prefix)."),
    db: str | None = DbOpt,
    threshold: float = typer.Option(2.0, "--threshold", help="Gap rule threshold in seconds."),
    retry_bound: int = typer.Option(3, "--retry-bound", help="Consecutive stalls re-prompted before delivering."),
    out: str = typer.Option("table", "--format", help="table or json."),
) -> None:
    """A session's timeline: time, gap, role, origin, decision, round kind, flags, excerpts."""
    from stallscan.report.timeline import timeline, timeline_table

    con = connect(db or default_db_path())
    sid, rows = timeline(con, session, threshold, retry_bound)
    con.close()
    if out == "json":
        sys.stdout.write(json.dumps({"session_id": sid, "events": rows}, indent=1, default=str) + "\n")
    else:
        Console().print(timeline_table(sid, rows))
