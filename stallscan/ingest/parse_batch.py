"""Run a format's parse (queries/ingest/<format>_events.sql) over one staged ingest batch.

Input: the batch's lines registered as `stage_raw` and its files as `batch_files` (see ingest.py).
Output: the temp tables / views fmt_events, fmt_fates, fmt_ctx (and, optionally, fmt_resume) that queries/ingest/ingest_commit.sql writes.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, cast

import duckdb

from stallscan.ingest.detect import SPECS
from stallscan.store import sql

LONG_LINE = 8 * 1024 * 1024  # lines longer than this get a single-threaded parse with more memory


def parse_batch(con: duckdb.DuckDBPyConnection, fmt: str, longest: int) -> None:
    """Decode the staged lines and parse them as `fmt`; `longest` is the batch's longest line in bytes.
    Runs inside the ingest transaction with the variable lenient_json set: a malformed line parses to NULL
    (a reject) instead of raising, which would abort the transaction."""
    with _room_for_long_lines(con, longest):
        sql.run(con, "ingest/stage_lines")
        views, parsed = cast(
            "tuple[Any, ...]", con.execute("SELECT getvariable('parse_views'), getvariable('parse_any')").fetchone()
        )
        if views != fmt:
            _drop_outputs(con, parsed is not None)
        if SPECS[fmt].whole_file:
            sql.run(con, "ingest/stage_doc")
        # a format whose event depends on lines before its first line names, per event start line, the line
        # a re-read must start from to rebuild it and the context in force there (file_stats.sql /
        # hold_tail.sql resume there); by default none
        con.execute(
            "CREATE OR REPLACE TEMP TABLE fmt_resume (fid INTEGER, line INTEGER, from_line INTEGER, "
            "ctx_session VARCHAR, ctx_model VARCHAR, ctx_turn VARCHAR)"
        )
        _run_parse(con, fmt)


@contextmanager
def _room_for_long_lines(con: duckdb.DuckDBPyConnection, longest: int) -> Iterator[None]:
    """DuckDB's JSON parse of one huge line needs many times its size (a 50 MB line ~3 GB across two
    threads): for a batch holding a line over LONG_LINE bytes, parse on one thread with room for it."""
    if longest <= LONG_LINE:
        yield
        return
    limit, threads = cast(
        "tuple[Any, ...]", con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchone()
    )
    con.execute(f"SET memory_limit = '{max(64 * longest, 1 << 30) // (1 << 20)}MB'")
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{limit}'")
        con.execute(f"SET threads = {threads}")


def _run_parse(con: duckdb.DuckDBPyConnection, fmt: str) -> None:
    """Run ingest/<fmt>_events.sql and its shared steps. Their views and macros read the batch's tables by name
    when used, so after a batch of the same format they are still in place: only the tables are rebuilt
    (binding a view costs tens of milliseconds a batch)."""
    ready = _views_of(con) == fmt
    for name in (*SPECS[fmt].before, f"{fmt}_events", *SPECS[fmt].then):
        for i, stmt in enumerate(sql.load(f"ingest/{name}")):
            if not (ready and _defines_only(stmt)):
                with sql.timed(f"ingest/{name}#{i}"):
                    con.execute(stmt)
    con.execute("SET VARIABLE parse_views = ?", [fmt])


def _views_of(con: duckdb.DuckDBPyConnection) -> str | None:
    """The format whose parse views this connection holds (None after _drop_outputs)."""
    return cast("str | None", cast("tuple[Any, ...]", con.execute("SELECT getvariable('parse_views')").fetchone())[0])


def _defines_only(stmt: str) -> bool:
    body = "\n".join(line for line in stmt.splitlines() if not line.lstrip().startswith("--")).lstrip().upper()
    return body.startswith(("CREATE OR REPLACE TEMP VIEW", "CREATE OR REPLACE TEMP MACRO"))


def _drop_outputs(con: duckdb.DuckDBPyConnection, parsed: bool = True) -> None:
    """Formats may produce fmt_events / fmt_fates / fmt_ctx as tables or views: clear the last batch's.
    parsed: whether this connection ran a parse before (the variable parse_any: a connection's first batch
    has no outputs to clear, and the catalog look-up, about 10 CPU ms, is skipped)."""
    con.execute("RESET VARIABLE parse_views")
    if not parsed:
        con.execute("SET VARIABLE parse_any = true")
        return
    for name, is_view in con.execute(
        "SELECT view_name, true FROM duckdb_views() WHERE temporary AND view_name IN ('fmt_events', 'fmt_fates', 'fmt_ctx') "
        "UNION ALL SELECT table_name, false FROM duckdb_tables() WHERE temporary "
        "AND table_name IN ('fmt_events', 'fmt_fates', 'fmt_ctx')"
    ).fetchall():
        con.execute(f"DROP {'VIEW' if is_view else 'TABLE'} {name}")
