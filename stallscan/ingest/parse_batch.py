"""Run a format's parse (queries/ingest/<format>_events.sql) over one staged ingest batch.

Input: the batch's lines registered as `stage_raw` and its files as `batch_files` (see ingest.py).
Output: the temp tables / views fmt_events, fmt_fates, fmt_ctx (and, optionally, fmt_resume) that queries/ingest/ingest_commit.sql writes.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextlib import contextmanager

import duckdb
import pyarrow as pa

from stallscan.ingest.detect import SPECS
from stallscan.store import sql

LONG_LINE = 8 * 1024 * 1024  # lines longer than this get a single-threaded parse with more memory
HELD_ROWS = 2048  # rows per record batch of a held table (small batches: DuckDB scans them on every thread)
_SETTING = re.compile(r"^(?:\s*--[^\n]*\n)*\s*(?:SET|RESET) (?!VARIABLE)", re.I)
_CREATE = re.compile(r"^(?:\s*--[^\n]*\n)*\s*CREATE OR REPLACE TEMP TABLE (\w+) AS\b(.*)$", re.S)


class _Holder:
    """One held table as DuckDB sees it: registered once a run, its Arrow table swapped per batch."""

    def __init__(self, table: pa.Table) -> None:
        self.table = table

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


class Held:
    """A format's large per-batch tables (FormatSpec.held) kept as Arrow tables instead of temp tables.
    The ingest transaction spans batches, and DuckDB frees a temp table replaced or dropped inside a
    transaction only when it ends: every batch's `cc` and `cc_reply` (the texts of all its lines) stayed in
    DuckDB's memory until the COMMIT, past the ingest's 1 GB limit, so DuckDB spilled them and flushed its
    allocator again and again (docs/benchmarks.md "ing21"). An Arrow table is freed when the next batch's
    replaces it. Each name is registered once a run (a registration inside a transaction holds its object
    until the transaction ends); `close` unregisters them."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.holders: dict[str, _Holder] = {}

    def put(self, name: str, table: pa.Table) -> None:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=HELD_ROWS), table.schema)
        if name in self.holders:
            self.holders[name].table = table
        else:  # (the temp table of an earlier batch, if any, makes way for the registered one)
            self.con.execute(f"DROP TABLE IF EXISTS {name}")
            self.holders[name] = _Holder(table)
            self.con.register(name, self.holders[name])

    def close(self) -> None:
        for name in self.holders:
            with contextlib.suppress(duckdb.Error):  # (a connection a failed write invalidated)
                self.con.unregister(name)
        self.holders.clear()


def parse_batch(
    con: duckdb.DuckDBPyConnection,
    fmt: str,
    longest: int,
    held: Held | None = None,
    text: bool = False,
    given: dict[str, pa.Table] | None = None,
) -> None:
    """Decode the staged lines and parse them as `fmt`; `longest` is the batch's longest line in bytes.
    Runs inside the ingest transaction with the variable lenient_json set: a malformed line parses to NULL
    (a reject) instead of raising, which would abort the transaction. `held`: where the format's held tables
    go (None: they are temp tables). `text`: the lines are staged as Arrow strings, all valid UTF-8 (staged.as_text).
    `given`: the format's `apart` tables as parse_apart made them (with `held` only)."""
    with _room_for_long_lines(con, longest):
        sql.run(con, "ingest/stage_lines_text" if text else "ingest/stage_lines")
        views, parsed = con.execute("SELECT getvariable('parse_views'), getvariable('parse_any')").fetchall()[0]
        if views != fmt:  # (parse_views is then reset: this batch's views are made again)
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
        _run_parse(con, fmt, held, given if held is not None else None, ready=views == fmt)


@contextmanager
def _room_for_long_lines(con: duckdb.DuckDBPyConnection | None, longest: int) -> Iterator[None]:
    """DuckDB's JSON parse of one huge line needs many times its size (a 50 MB line ~3 GB across two
    threads): for a batch holding a line over LONG_LINE bytes, parse on one thread with room for it."""
    if con is None or longest <= LONG_LINE:
        yield
        return
    limit, threads = con.execute("SELECT current_setting('memory_limit'), current_setting('threads')").fetchall()[0]
    con.execute(f"SET memory_limit = '{max(64 * longest, 1 << 30) // (1 << 20)}MB'")
    con.execute("SET threads = 1")
    try:
        yield
    finally:
        con.execute(f"SET memory_limit = '{limit}'")
        con.execute(f"SET threads = {threads}")


def _run_parse(
    con: duckdb.DuckDBPyConnection,
    fmt: str,
    held: Held | None = None,
    given: dict[str, pa.Table] | None = None,
    ready: bool = False,
) -> None:
    """Run ingest/<fmt>_events.sql and its shared steps. Their views and macros read the batch's tables by name
    when used, so after a batch of the same format they are still in place: only the tables are rebuilt
    (binding a view costs tens of milliseconds a batch). A held table's SELECT goes to Arrow (`Held`); an `apart`
    one is taken from `given` (parse_apart's, made in the second instance). ready: whether the connection holds
    this format's views already (the variable parse_views, which the caller read)."""
    for name in (*SPECS[fmt].before, f"{fmt}_events", *SPECS[fmt].then):
        for i, stmt in enumerate(sql.load(f"ingest/{name}")):
            made = _CREATE.match(stmt) if held is not None else None
            if held is not None and made and given is not None and made.group(1) in given:
                held.put(made.group(1), given[made.group(1)])  # (parsed apart: parse_apart timed it)
            elif not (ready and _defines_only(stmt)):
                with sql.timed(f"ingest/{name}#{i}"):
                    if held is not None and made and made.group(1) in SPECS[fmt].held:
                        held.put(made.group(1), con.sql(made.group(2)).to_arrow_table())  # (no DB-API copy)
                    else:
                        con.execute(stmt)
    if not ready:
        con.execute("SET VARIABLE parse_views = ?", [fmt])


def parse_apart(con: duckdb.DuckDBPyConnection, fmt: str, longest: int) -> dict[str, pa.Table]:
    """The format's `apart` tables (FormatSpec.apart: made from the staged lines and batch_files alone) parsed on
    `con`, the second instance (parse_apart.Apart, its batch set), with the SET / RESET of a setting around them,
    as Arrow tables for parse_batch's `given`. Touches nothing of the ingest's instance: it may run on another
    thread while that instance writes the batch before."""
    out: dict[str, pa.Table] = {}
    with _room_for_long_lines(con, longest):
        for name in (*SPECS[fmt].before, f"{fmt}_events", *SPECS[fmt].then):
            for i, stmt in enumerate(sql.load(f"ingest/{name}")):
                made = _CREATE.match(stmt)
                if _SETTING.match(stmt):
                    con.execute(stmt)
                elif made and made.group(1) in SPECS[fmt].apart:
                    with sql.timed(f"ingest/{name}#{i}"):
                        out[made.group(1)] = con.sql(made.group(2)).to_arrow_table()
    return out


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
