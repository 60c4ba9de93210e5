"""A big ingest's first parse statement in a DuckDB instance of its own (`Apart`), so that the ingest's own
instance can run on one worker thread from the first batch to the last.

DuckDB appends an INSERT's rows twice when it runs in parallel and a thread holds less than a row group
(`PhysicalInsert::Combine`); on one thread it appends them once. Setting the ingest's database to one thread around
each INSERT made the exiting worker flush its allocations, so every next batch faulted its memory in again
(docs/benchmarks.md "ing25"). Here the switch happens once a run: the parse statement that reads the staged lines
(a format's `apart` table, e.g. the Claude parse's `cc`: most of the batch's CPU, and it reads nothing of the
database) runs on two threads in a second, in-memory instance, and its Arrow result is held in the ingest's
(parse_batch.Held) as before. The ingest's other statements (the replies' GROUP BY, the INSERT, the bookkeeping)
run on one thread, with the same answers.
"""

from __future__ import annotations

import os
import re

import duckdb
import pyarrow as pa

from stallscan.store import sql
from stallscan.store.db import memory_budget, threads


def memory_limit() -> str:
    """The parse's working memory (a limit, not a reservation; a batch with a line over parse_batch.LONG_LINE
    raises it): a quarter of the process's budget (store.db.memory_budget: 512MB at its default 2 GiB), at least
    256MB; $STALLSCAN_PARSE_MEMORY_LIMIT overrides. The ingest's instance keeps its own. The 1 GB Claude ingest's
    peak RSS, 4 alternated runs: 1,040-1,056 MiB with 512MB against 1,088-1,119 with 1GB (base 1,050-1,081), CPU
    the same (docs/benchmarks.md "ing27")."""
    return os.environ.get("STALLSCAN_PARSE_MEMORY_LIMIT") or f"{max(256, memory_budget() // 4 // 2**20)}MB"


_MACRO = re.compile(r"^(?:\s*--[^\n]*\n)*\s*CREATE OR REPLACE MACRO\b")


class Apart:
    """The second instance: the schema's macros (parse_line, parse_ts, json_text, is_blank ...), the variable
    lenient_json set (a malformed line parses to NULL, a reject), UTC, the batch's staged lines registered as
    `stage_raw` (the same object as the ingest's: staged.Stage) and its files as `batch_files` per batch."""

    def __init__(self, ingest: duckdb.DuckDBPyConnection, stage: object) -> None:
        naive_tz = ingest.execute("SELECT getvariable('naive_tz')").fetchall()[0][0]  # (parse_ts reads it)
        self.con = duckdb.connect(":memory:", config={"threads": threads(), "memory_limit": memory_limit()})
        try:
            self.con.execute("SET TimeZone = 'UTC'")
            self.con.execute("SET enable_progress_bar = false")
            for stmt in sql.load("store/schema"):
                if _MACRO.match(stmt):
                    self.con.execute(stmt)
            self.con.execute("SET VARIABLE lenient_json = true")
            self.con.execute("SET VARIABLE naive_tz = ?", [naive_tz])
            self.con.register("stage_raw", stage)
        except BaseException:
            self.con.close()
            raise
        self.stage_view: str | None = None

    def batch(self, files: pa.Table, stage_view: str) -> None:
        """The batch's files (batch_files' columns) and the query file of its staged lines' view."""
        self.con.register("batch_files", files)
        if stage_view != self.stage_view:
            sql.run(self.con, stage_view)
            self.stage_view = stage_view

    def close(self) -> None:
        self.con.close()
