"""Ingest transcript files into the canonical tables: incremental, idempotent, nothing lost.

Core API (no CLI here): `ingest_paths(con, paths)` returns an `IngestResult`; `unchanged(con, paths)` answers,
reading only, the run that would find every file unchanged (the CLI asks it first, on a read-only connection). Parsing happens in
DuckDB (queries/ingest/<format>_events.sql); Python only plans files, reads bytes in bulk and keeps books.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

import duckdb

from stallscan.ingest.commit_beside import CommitBeside
from stallscan.ingest.detect import FORMATS
from stallscan.ingest.discover import discover
from stallscan.ingest.plan import all_unchanged
from stallscan.ingest.plan import plan as _plan  # (a module global: tests wrap it)
from stallscan.ingest.result import IngestResult
from stallscan.store import sql
from stallscan.store.errors import StallscanError

# bytes read per batch; bounds memory. $STALLSCAN_BATCH_BYTES overrides (tests: small chunks; a big file's chunk is
# at most this and read_ahead.CHUNK_BYTES, 64 MB). Each batch pays about 0.06-0.08 CPU s whatever its size (binding and
# planning its ~20 statements: the Claude parse alone ~15 ms); 128 MB instead of 64 halves the count of batches of
# small files (docs/benchmarks.md "first18": lower CPU, +30-100 MB peak RSS)
BATCH_BYTES = int(os.environ.get("STALLSCAN_BATCH_BYTES") or 128 * 1024 * 1024)
# WAL size that triggers a checkpoint during ingest. Each batch commits to the WAL (durable); DuckDB's
# 16 MB default checkpoints after every batch, rewriting the table's open row group each time.
CHECKPOINT_EVERY = os.environ.get("STALLSCAN_CHECKPOINT_EVERY") or "256MB"
# a run that reads less commits to the WAL and leaves it there (no checkpoint at its COMMIT, none after it): the
# rows go into the file at the next checkpoint, the one DuckDB makes when the database closes, together with
# whatever the same process writes next (a report's derives) instead of in a checkpoint of their own; and it keeps
# the connection's memory limit and checkpoint threshold (docs/benchmarks.md, cnt21)
SMALL_RUN_BYTES = 4 << 20
# a run that reads less (a new session: tens to hundreds of KB) parses and writes on one DuckDB thread: its
# statements are short, and a second worker only adds its tasks' set-up and hand-overs (docs/benchmarks.md "one23")
ONE_THREAD_BYTES = 1 << 20
MEMORY_LIMIT = "1GB"  # DuckDB's limit during ingest ($STALLSCAN_MEMORY_LIMIT overrides)


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: list[str],
    fmt: str = "auto",
    progress: Callable[[int, int], None] | None = None,
    naive_tz: str | None = None,
    conversation_attr: str | None = None,
    beside: CommitBeside | None = None,
) -> IngestResult:
    """Ingest files, directories or globs. `fmt` forces a format ("auto" detects per file).

    naive_tz: the zone of timestamps logged without one (Hermes, OpenHands, aider); default UTC.
    conversation_attr: OTLP traces without gen_ai.conversation.id are grouped by this span (or resource)
    attribute where set, else by trace (issue 22; LiteLLM payloads: a key of metadata / requester_metadata).
    """
    con.execute("SET VARIABLE otlp_conversation_attr = ?", [conversation_attr])
    if naive_tz:
        try:
            con.execute("SELECT timezone(?, TIMESTAMP '2020-01-01')", [naive_tz])
        except duckdb.Error:
            raise StallscanError(f"unknown time zone {naive_tz!r}", hint="an IANA name, e.g. Europe/Berlin") from None
        con.execute("SET VARIABLE naive_tz = ?", [naive_tz])
    if fmt != "auto" and fmt not in FORMATS:
        raise StallscanError(f"unknown format {fmt!r}", hint="one of: auto, " + ", ".join(FORMATS))
    t0 = time.perf_counter()
    found = discover(paths)
    res = IngestResult(
        files=len(found.files) + len(found.unreadable),
        unreadable=found.unreadable,
        searched=found.searched,
        left_out=found.left_out,
        left_out_unopened=found.unopened,
    )
    with sql.timed("plan (stat, detect, files lookup)"):
        plans = _plan(con, found.files, fmt, res)
    total = sum(p.size - p.start_offset for p in plans)
    run_files = {str(p.path): p.start_line for p in plans}
    touched: set[str] = set()
    saved = con.execute(
        "SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order'), "
        "current_setting('checkpoint_threshold')"
    ).fetchall()[0]
    # a small run (a new session or two) keeps the connection's memory limit and checkpoint threshold: it holds
    # far less than either, and the two SETs and their restores cost about 4 CPU ms (memory_limit's most)
    small = total < SMALL_RUN_BYTES
    # bounded memory: DuckDB evicts/spills beyond this; nothing here relies on insertion order (all ORDER BY)
    if not small:
        con.execute(f"SET memory_limit = '{os.environ.get('STALLSCAN_MEMORY_LIMIT', MEMORY_LIMIT)}'")
    con.execute("SET preserve_insertion_order = false")
    if not small:
        con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_EVERY}'")
    # malformed lines become rejects (parse_line's lenient mode): a statement that raises would abort the
    # transaction, which spans batches
    con.execute("SET VARIABLE lenient_json = true")
    failed = True
    checkpoint: bool | None = False  # None: the last COMMIT left to `beside`, the transaction still open
    try:
        if plans:  # (numpy / pyarrow load only when there is something to read)
            from stallscan.ingest.batch import run_batches
            from stallscan.store.db import one_thread

            with one_thread(con, total < ONE_THREAD_BYTES):
                checkpoint = run_batches(
                    con, plans, res, touched, progress, total, BATCH_BYTES, small, open_last=beside is not None
                )
        failed = False
    finally:  # (after a failed write these may fail too: the first error is the one to report)
        sql.after_failure(con, "RESET VARIABLE lenient_json", failed)
        if not small:
            sql.after_failure(con, f"SET memory_limit = '{saved[0]}'", failed)
        sql.after_failure(con, f"SET preserve_insertion_order = {saved[1]}", failed)
        if not small and checkpoint is not None:  # (else set back after the COMMIT: commit_beside.py)
            sql.after_failure(con, f"SET checkpoint_threshold = '{saved[2]}'", failed)
    if checkpoint:  # (not after a small run: SMALL_RUN_BYTES)
        with sql.timed("final CHECKPOINT"):
            con.execute("CHECKPOINT")  # leave a compact file: the next open has no WAL to replay
    unread = {u[0] for u in res.unreadable}
    run_files = {f: line for f, line in run_files.items() if f not in unread}
    try:  # (before a COMMIT left to `beside`: inside the transaction, which sees its own rows)
        if run_files:
            from stallscan.ingest.batch import tally

            tally(con, res, run_files)
            if fmt != "auto":  # a forced format that matched nothing in a file is said, not skipped silently
                res.forced_no_events = [r[0] for r in sql.query(con, "ingest/run_no_events").fetchall()]
    except BaseException:
        if checkpoint is None:
            sql.rollback(con)
            sql.after_failure(con, f"SET checkpoint_threshold = '{saved[2]}'", True)
        raise
    if checkpoint is None and beside is not None:
        beside.start(con, saved[2])  # returns once the rows are visible; the checkpoint goes on beside
    res.ingested = len(run_files)
    res.sessions = len(touched)
    res.seconds = time.perf_counter() - t0
    sql.report(f"ingest {res.bytes / 1e6:.0f} MB in {res.seconds:.2f} s")
    return res


def unchanged(con: duckdb.DuckDBPyConnection, paths: list[str], fmt: str = "auto") -> IngestResult | None:
    """The result `ingest_paths` would return when every file the paths name is known and unchanged since the
    last ingest; None when one is new, grown, rewritten, unreadable, or none is found (ingest_paths then has
    work to do or something to report). Reads only: works on a read-only connection."""
    t0 = time.perf_counter()
    found = discover(paths)
    if found.unreadable or not found.files:
        return None
    n = all_unchanged(con, found.files, fmt)
    if n is None:
        return None
    res = IngestResult(
        files=n, unchanged=n, searched=found.searched, left_out=found.left_out, left_out_unopened=found.unopened
    )
    res.seconds = time.perf_counter() - t0
    return res
