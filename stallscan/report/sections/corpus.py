"""Report section "Corpus": what was ingested, per harness, and what was skipped or rejected (data, then
its blocks)."""

from __future__ import annotations

from typing import Any, cast

import duckdb

from stallscan.report.blocks import Block, Column, Details, Paragraph, Table
from stallscan.report.cells import num
from stallscan.report.section import ReportOptions, Section
from stallscan.store import sql


def collect(con: duckdb.DuckDBPyConnection, opts: ReportOptions) -> dict[str, Any]:
    cur = sql.query(con, "report/corpus_summary")
    cols = [d[0] for d in cur.description]
    harnesses = [dict(zip(cols, r)) for r in cur.fetchall()]
    for h in harnesses:
        for k in ("first_ts", "last_ts"):
            h[k] = h[k].isoformat() if h[k] is not None else None
    files = dict(
        con.execute("SELECT coalesce(status, 'unknown'), count(*) FROM files GROUP BY ALL ORDER BY 1").fetchall()
    )
    rejects = [
        {"reason": r, "lines": n}
        for r, n in con.execute("SELECT reason, count(*) FROM rejects GROUP BY ALL ORDER BY 2 DESC, 1").fetchall()
    ]
    skipped = dict(con.execute("SELECT kind, count(*) FROM skipped GROUP BY ALL ORDER BY 2 DESC, 1").fetchall())
    cur = sql.query(con, "ingest/unknown_shapes", {"files": None, "start_lines": None})  # the whole database
    shape_cols = [d[0] for d in cur.description]
    unknown_shapes = [dict(zip(shape_cols, r)) for r in cur.fetchall()]
    row = con.execute("SELECT count(*) FROM files WHERE pending_bytes > 0").fetchall()[0]
    pending = row[0] if row else 0
    totals = {
        k: sum(h[k] or 0 for h in harnesses)
        for k in ("files", "sessions", "events", "user_messages", "replies", "tool_calls")
    }
    # a session is counted once, though its events may come from two harnesses' files (a Cline task's API
    # history and its UI messages): the by-harness rows each count it, the total does not add them up
    totals["sessions"] = cast("tuple[int]", con.execute("SELECT count(*) FROM scope_sessions").fetchall()[0])[0]
    filtered = bool(opts.since or opts.until or opts.harness or opts.model)
    # the populations each count is over (issue 23): totals.files = files holding a reported event; the
    # database's files, skipped and rejected lines are every file's unless the report is filtered, then the
    # files holding a reported event
    in_scope = "file IN (SELECT DISTINCT file FROM scoped_events)" if filtered else "true"
    skipped_lines, rejected_lines = cast(
        "tuple[int, int]",
        con.execute(
            f"SELECT (SELECT count(*) FROM skipped WHERE {in_scope}), (SELECT count(*) FROM rejects WHERE {in_scope})"
        ).fetchall()[0],
    )
    return {
        "totals": totals,
        "population": {
            "filtered": filtered,
            "files_in_database": sum(files.values()),
            "files_with_events": totals["files"],
            "skipped_lines": skipped_lines,
            "rejected_lines": rejected_lines,
            "lines_over": "the files holding a reported event" if filtered else "every file in the database",
        },
        "by_harness": harnesses,
        "files_by_status": files,
        "rejects": rejects,
        "skipped": skipped,
        "pending_truncated_lines": pending,
        # drift: records of a known format in a shape its reader does not know (format, version, shape)
        "unknown_shapes": unknown_shapes,
    }


COLS = [
    Column("harness", "id", 99),
    Column("files", keep=40),
    Column("sessions", keep=90),
    Column("events", keep=85),
    Column("user msgs", keep=70),
    Column("replies", keep=60),
    Column("tool calls", keep=50),
    Column("from", "id", 30),
    Column("to", "id", 35),
]
COUNTS = ("files", "sessions", "events", "user_messages", "replies", "tool_calls")


def blocks(data: dict[str, Any], report: dict[str, Any], full: bool) -> list[Block]:
    from stallscan.report.render import unknown_shape_line  # (here: render imports rich, which collect needs not)

    shapes: list[Block] = [Paragraph(unknown_shape_line(u), "warn") for u in data.get("unknown_shapes", [])]
    # the inputs this run could not read (stallscan.report.output.add_unreadable), in every form
    shapes += [Paragraph(f"unreadable: {u['path']} ({u['why']})", "warn") for u in data.get("unreadable", [])]
    if not full:
        return [Paragraph(_one_line(data)), *shapes]
    rows = [
        [h["harness"], *(num(h[k]) for k in COUNTS), _day(h["first_ts"]), _day(h["last_ts"])]
        for h in data["by_harness"]
    ]
    rows.append(["**total**", *(num(data["totals"][k]) for k in COUNTS), "", ""])
    rej = sum(r["lines"] for r in data["rejects"])
    pending = data["pending_truncated_lines"]
    out: list[Block] = [
        Table(COLS, rows),
        Paragraph(
            "Files by status: "
            + ", ".join(f"{k} {num(v)}" for k, v in data["files_by_status"].items())
            + f". Rejected lines: {num(rej)}. Skipped lines: {num(sum(data['skipped'].values()))} "
            f"({num(len(data['skipped']))} kinds: metadata, progress and snapshot records that are not events)."
            + (f" {num(pending)} truncated last line(s) pending (retried next ingest)." if pending else "")
        ),
        *shapes,
    ]
    if data["rejects"]:
        cols = [Column("reject reason", "text", 99, min=20, max=60), Column("lines")]
        out.append(Table(cols, [[r["reason"], num(r["lines"])] for r in data["rejects"]]))
    if data["skipped"]:
        cols = [Column("kind", "text", 99, min=20, max=50), Column("lines")]
        rows = [[k, num(v)] for k, v in data["skipped"].items()]
        out.append(Details(f"Skipped lines by kind ({num(len(data['skipped']))} kinds)", [Table(cols, rows)]))
    return out


def _one_line(data: dict[str, Any]) -> str:
    """The default report's line: what the report covers, and the lines the database left out."""
    tot, pop = data["totals"], data["population"]
    rej = pop["rejected_lines"]
    return (
        f"{num(tot['sessions'])} sessions, {num(tot['events'])} events from {num(tot['files'])} of "
        f"{num(pop['files_in_database'])} files; {num(pop['skipped_lines'])} lines skipped"
        + (f", {num(rej)} rejected" if rej else "")
        + (" there" if pop["filtered"] else "")
    )


def _day(iso: str | None) -> str:
    return iso[:10] if iso else "–"


SECTION = Section("corpus", "Corpus", collect, blocks)
