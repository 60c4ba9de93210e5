"""`stallscan boundaries`: list the replayed turn-boundary decisions."""

from __future__ import annotations

import json
import sys

import typer

from stallscan.store.errors import StallscanError

from . import DbOpt, _err_console, _guard, app
from ._lazy import Console, Table, connect, default_db_path

COLUMNS = (
    "session_id",
    "line",
    "ts",
    "gap_s",
    "prev_reply_status",
    "initiator",
    "decided_by",
    "decision",
    "origin",
    "origin_rule",
    "error",
    "excerpt",
)


@app.command()
@_guard
def boundaries(
    db: str | None = DbOpt,
    threshold: float = typer.Option(2.0, "--threshold", help="Gap rule threshold in seconds."),
    session: str | None = typer.Option(None, "--session", help="Only this session (and its sidechains)."),
    errors_only: bool = typer.Option(False, "--errors-only", help="Only misclassified turns."),
    show_all: bool = typer.Option(False, "--all", help="Also plain tool results and records that are not requests."),
    limit: int | None = typer.Option(None, "--limit", help="At most this many rows."),
    out: str = typer.Option("table", "--format", help="table or json."),
    config: str | None = typer.Option(
        None, "--config", help="stallscan.toml with extra prompt patterns / label overrides."
    ),
) -> None:
    """Replay the router's turn-boundary decision for every user turn and list it next to who really wrote it."""
    from stallscan.replay.boundaries import replay_boundaries
    from stallscan.replay.labels import label_events
    from stallscan.store import sql

    if out not in ("table", "json"):
        raise StallscanError(f"unknown --format {out!r}", hint="table or json")
    if limit is not None and limit < 0:
        raise StallscanError("--limit must be >= 0")
    con = connect(db or default_db_path())
    label_events(con, config)
    summary = replay_boundaries(con, threshold)
    cur = sql.query(
        con, "report/boundaries_list", {"session": session, "errors_only": errors_only, "all": show_all, "limit": limit}
    )
    cols = [d[0] for d in cur.description]
    rows = [dict(zip(cols, r)) for r in cur.fetchall()]
    con.close()
    if session and not rows and not errors_only:
        raise StallscanError(
            f"no user turns in session {session!r}", hint="list sessions with: stallscan sql 'SELECT * FROM sessions'"
        )
    if out == "json":
        for r in rows:
            r["ts"] = r["ts"].isoformat() if r["ts"] is not None else None
        sys.stdout.write(
            json.dumps({"threshold": threshold, "counts": summary, "decisions": rows}, indent=2, default=str) + "\n"
        )
        return
    t = Table(title=f"turn boundaries at {threshold:g} s", title_justify="left")
    for c in (
        "session",
        "line",
        "time (UTC)",
        "gap s",
        "prev reply",
        "hdr",
        "decided by",
        "decision",
        "truth",
        "rule",
        "error",
        "excerpt",
    ):
        t.add_column(c, no_wrap=c != "excerpt", overflow="ellipsis", max_width=40 if c == "excerpt" else 26)
    for r in rows:
        err = r["error"]
        t.add_row(
            r["session_id"][:8],
            str(r["line"]),
            (r["ts"].isoformat()[:19].replace("T", " ") if r["ts"] else "-"),
            "-" if r["gap_s"] is None else f"{r['gap_s']:.2f}",
            r["prev_reply_status"] or "-",
            r["initiator"] or "",
            r["decided_by"],
            r["decision"],
            r["origin"],
            r["origin_rule"],
            "" if err == "none" else err.replace("_as_", " as "),
            r["excerpt"],
            style="bold red" if err in ("auto_as_human", "human_as_auto") else None,
        )
    Console().print(t)
    n_err = sum(1 for r in rows if r["error"] in ("auto_as_human", "human_as_auto"))
    _err_console().print(f"{len(rows):,} row(s), {n_err:,} misclassified", highlight=False)
