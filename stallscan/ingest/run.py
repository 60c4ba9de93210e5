"""Ingest transcript files into the canonical tables: incremental, idempotent, nothing lost.

Core API (no CLI here): `ingest_paths(con, paths)` returns an `IngestResult`. Parsing happens in
DuckDB (queries/ingest/<format>_events.sql); Python only plans files, reads bytes in bulk and keeps books.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

import duckdb
import pyarrow as pa

from stallscan.ingest.detect import FORMATS, SPECS
from stallscan.ingest.discover import discover
from stallscan.ingest.files_rows import update_files
from stallscan.ingest.parse_batch import parse_batch
from stallscan.ingest.plan import FilePlan, _has_companion, _stem, _why, read_errors
from stallscan.ingest.plan import plan as _plan  # (a module global: tests wrap it)
from stallscan.ingest.reader import ReadState, iter_lines, read_whole
from stallscan.store import sql, stamps
from stallscan.store.errors import StallscanError

# bytes read per batch (one transaction); bounds memory. $STALLSCAN_BATCH_BYTES overrides (tests: small chunks)
BATCH_BYTES = int(os.environ.get("STALLSCAN_BATCH_BYTES") or 64 * 1024 * 1024)
BATCH_FILES = 2000
# WAL size that triggers a checkpoint during ingest. Each batch commits to the WAL (durable); DuckDB's
# 16 MB default checkpoints after every batch, rewriting the table's open row group each time.
CHECKPOINT_EVERY = os.environ.get("STALLSCAN_CHECKPOINT_EVERY") or "256MB"
# a transaction spans batches until it holds this many events (4 DuckDB row groups) or this many bytes
# read: appends of at least a row group are written once, compressed, straight into the database file
COMMIT_ROWS = int(os.environ.get("STALLSCAN_COMMIT_ROWS") or 4 * 122_880)
COMMIT_BYTES = int(os.environ.get("STALLSCAN_COMMIT_BYTES") or 1 << 31)
MEMORY_LIMIT = "1GB"  # DuckDB's limit during ingest ($STALLSCAN_MEMORY_LIMIT overrides)
STAGE_ROWS = 2048  # rows per arrow record batch handed to DuckDB


@dataclass
class IngestResult:
    files: int = 0  # files considered
    ingested: int = 0  # files read (new, grown or rewritten)
    unchanged: int = 0  # files skipped because nothing changed
    unrecognized: list[str] = field(default_factory=list)  # paths whose format was not recognised
    unreadable: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    sessions: int = 0  # sessions touched by this run
    events: int = 0  # events written by this run
    lines: int = 0  # lines read by this run
    skipped: dict[str, int] = field(default_factory=dict)  # kind -> lines knowingly skipped
    rejects: int = 0
    pending: int = 0  # truncated last lines left for the next ingest
    bytes: int = 0
    seconds: float = 0.0
    searched: list[str] = field(default_factory=list)

    @property
    def mb_per_s(self) -> float:
        return self.bytes / 1e6 / self.seconds if self.seconds > 0 else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "ingested": self.ingested,
            "unchanged": self.unchanged,
            "unrecognized": self.unrecognized,
            "unreadable": [list(u) for u in self.unreadable],
            "sessions": self.sessions,
            "events": self.events,
            "lines": self.lines,
            "skipped": dict(sorted(self.skipped.items())),
            "rejects": self.rejects,
            "pending": self.pending,
            "bytes": self.bytes,
            "seconds": round(self.seconds, 3),
            "mb_per_s": round(self.mb_per_s, 1),
            "searched": self.searched,
        }


def ingest_paths(
    con: duckdb.DuckDBPyConnection,
    paths: list[str],
    fmt: str = "auto",
    progress: Callable[[int, int], None] | None = None,
    naive_tz: str | None = None,
) -> IngestResult:
    """Ingest files, directories or globs. `fmt` forces a format ("auto" detects per file).

    naive_tz: the zone of timestamps logged without one (Hermes, OpenHands, aider); default UTC.
    """
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
        files=len(found.files) + len(found.unreadable), unreadable=found.unreadable, searched=found.searched
    )
    with sql.timed("plan (stat, detect, files lookup)"):
        plans = _plan(con, found.files, fmt, res)
    total = sum(p.size - p.start_offset for p in plans)
    run_files = {str(p.path): p.start_line for p in plans}
    touched: set[str] = set()
    saved = cast(
        "tuple[Any, ...]",
        con.execute(
            "SELECT current_setting('memory_limit'), current_setting('preserve_insertion_order'), "
            "current_setting('checkpoint_threshold')"
        ).fetchone(),
    )
    # bounded memory: DuckDB evicts/spills beyond this; nothing here relies on insertion order (all ORDER BY)
    con.execute(f"SET memory_limit = '{os.environ.get('STALLSCAN_MEMORY_LIMIT', MEMORY_LIMIT)}'")
    con.execute("SET preserve_insertion_order = false")
    con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_EVERY}'")
    # malformed lines become rejects (parse_line's lenient mode): a statement that raises would abort the
    # transaction, which spans batches
    con.execute("SET VARIABLE lenient_json = true")
    try:
        _run_batches(con, plans, res, touched, progress, total)
    finally:
        con.execute("RESET VARIABLE lenient_json")
        con.execute(f"SET memory_limit = '{saved[0]}'")
        con.execute(f"SET preserve_insertion_order = {saved[1]}")
        con.execute(f"SET checkpoint_threshold = '{saved[2]}'")
    if plans:
        with sql.timed("final CHECKPOINT"):
            con.execute("CHECKPOINT")  # leave a compact file: the next open has no WAL to replay
    unread = {u[0] for u in res.unreadable}
    run_files = {f: line for f, line in run_files.items() if f not in unread}
    _tally(con, res, run_files)
    res.ingested = len(run_files)
    res.sessions = len(touched)
    res.seconds = time.perf_counter() - t0
    sql.report(f"ingest {res.bytes / 1e6:.0f} MB in {res.seconds:.2f} s")
    return res


def _run_batches(
    con: duckdb.DuckDBPyConnection,
    plans: list[FilePlan],
    res: IngestResult,
    touched: set[str],
    progress: Callable[[int, int], None] | None,
    total: int,
) -> None:
    """Ingest the plans batch by batch. A transaction spans batches until it holds COMMIT_ROWS events (or
    COMMIT_BYTES read), and the run's last batch commits: DuckDB then writes whole row groups straight to
    the database file once, instead of logging every row to the WAL and rewriting it at the checkpoint.
    Each batch's `files` rows are in the same transaction as its rows, so a kill loses whole batches only."""
    done = 0
    tx_rows = tx_bytes = 0
    stage = _Stage()
    con.register("stage_raw", stage)
    con.execute("BEGIN TRANSACTION")
    try:
        while plans:
            continued: list[FilePlan] = []
            for batch in _batches(plans):
                nbytes, nrows = _ingest_batch(con, stage, batch, res, touched, continued)
                done, tx_bytes, tx_rows = done + nbytes, tx_bytes + nbytes, tx_rows + nrows
                if tx_rows >= COMMIT_ROWS or tx_bytes >= COMMIT_BYTES:
                    with sql.timed("COMMIT"):
                        con.execute("COMMIT")
                    con.execute("BEGIN TRANSACTION")
                    tx_rows = tx_bytes = 0
                if progress:
                    progress(done, total)
            plans = continued  # big files go on from where their last chunk stopped
        with sql.timed("COMMIT"):
            con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("stage_raw")


def _batches(plans: list[FilePlan]) -> Iterator[list[FilePlan]]:
    by_fmt: dict[str, list[FilePlan]] = {}
    for p in plans:
        by_fmt.setdefault(p.fmt, []).append(p)
    for group in by_fmt.values():
        batch: list[FilePlan] = []
        size = 0
        for p in group:
            batch.append(p)
            size += p.size - p.start_offset
            if size >= BATCH_BYTES or len(batch) >= BATCH_FILES:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch


class _Stage:
    """The batch's lines as DuckDB sees them (`stage_raw`): registered once per run, its table swapped per
    batch. An object registered inside a transaction stays referenced until the transaction ends, and the
    ingest transaction spans batches: registering each batch's lines would hold every batch's bytes."""

    def __init__(self) -> None:
        self.empty = pa.table(
            {"fid": pa.array([], pa.int32()), "line": pa.array([], pa.int32()), "raw": pa.array([], pa.large_binary())}
        )
        self.table = self.empty  # (registering reads the schema)

    def __arrow_c_stream__(self, requested_schema: object = None) -> object:
        return self.table.__arrow_c_stream__(requested_schema)


def _ingest_batch(
    con: duckdb.DuckDBPyConnection,
    stage: _Stage,
    batch: list[FilePlan],
    res: IngestResult,
    touched: set[str],
    continued: list[FilePlan],
) -> tuple[int, int]:
    """Read, parse and write one batch of same-format files (a big file: one chunk) inside the open
    transaction. Returns the bytes read and the events written."""
    tables: list[pa.Table] = []
    states: list[ReadState] = []
    nbytes = 0
    readable: list[FilePlan] = []
    for plan in batch:
        fid = len(readable)
        state = ReadState(plan.start_offset, plan.start_line)
        try:
            if SPECS[plan.fmt].whole_file:
                blocks = read_whole(plan.path, plan.compression, state)
            else:
                blocks = iter_lines(
                    plan.path, plan.compression, state, plan.skip_leading_newline, BATCH_BYTES if plan.chunked else None
                )
            with sql.timed("read + newline scan"):
                got = [block.table(fid) for block in blocks]
        except read_errors() as exc:  # vanished, replaced or damaged since it was planned: its rows stay as they were
            res.unreadable.append((str(plan.path), _why(exc)))
            continue
        readable.append(plan)
        tables.extend(got)
        states.append(state)
        nbytes += state.consumed_bytes - plan.start_offset
        res.pending += 1 if state.pending_bytes else 0
        if state.more:
            continued.append(plan)
    if not readable:
        return nbytes, 0
    batch = readable
    # zero-copy staging: DuckDB scans the arrow batches in parallel (small record batches = more threads)
    staged = pa.concat_tables(tables) if tables else stage.empty
    stage.table = pa.Table.from_batches(staged.to_batches(max_chunksize=STAGE_ROWS), staged.schema)
    con.register(
        "_batch_files",
        pa.table(
            {
                "fid": pa.array(range(len(batch)), pa.int32()),
                "file": [str(p.path) for p in batch],
                "stem": [_stem(p.path) for p in batch],
                "fmt": [p.fmt for p in batch],
                "start_line": pa.array([p.start_line for p in batch], pa.int32()),
                "ctx_session": pa.array([p.ctx_session for p in batch], pa.string()),
                "ctx_model": pa.array([p.ctx_model for p in batch], pa.string()),
                "ctx_turn": pa.array([p.ctx_turn for p in batch], pa.string()),
                "companion": pa.array([_has_companion(p) for p in batch], pa.bool_()),
                "more": pa.array([st.more for st in states], pa.bool_()),  # read on in a next chunk
            }
        ),
    )
    con.execute("CREATE OR REPLACE TEMP TABLE batch_files AS SELECT * FROM _batch_files")
    con.unregister("_batch_files")
    import pyarrow.compute as pc  # (100 ms to import: only once there is something to read)

    longest = pc.max(pc.binary_length(staged.column("raw"))).as_py() or 0 if staged.num_rows else 0
    parse_batch(con, batch[0].fmt, longest)
    sql.run(con, "ingest/batch_keys")
    if any(st.more for st in states):  # the rows a next chunk re-reads are held back (see hold_tail.sql)
        sql.run(con, "ingest/hold_tail")
    else:
        con.execute("CREATE OR REPLACE TEMP TABLE held (fid INTEGER, from_line INTEGER)")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE held_events (fid INTEGER, line INTEGER, last_line INTEGER, role VARCHAR, "
            "session_id VARCHAR, model VARCHAR, turn_id VARCHAR)"
        )
    sql.run(con, "ingest/ingest_commit")
    if batch[0].fmt == "openai_chat":
        sql.run(con, "ingest/openai_chat_ts_quality")
    with sql.timed("files rows (file_stats + upsert)"):
        update_files(con, batch, states)
    # the events change counter and the sessions this batch changed: derived tables replay only those
    with sql.timed("record_changes"):
        stamps.record_changes(con, "SELECT session_id FROM touched UNION SELECT session_id FROM removed")
    written = con.execute("SELECT session_id, n FROM touched").fetchall()
    touched.update(r[0] for r in written)
    for plan in (p for p in continued if p in batch):
        row = cast(
            "tuple[Any, ...]",
            con.execute(
                "SELECT resume_line, resume_offset, ctx_session, ctx_model, ctx_turn FROM files WHERE path = ?",
                [str(plan.path)],
            ).fetchone(),
        )
        if row[1] <= plan.start_offset:  # one open event fills the chunk: read the rest in one pass
            plan.chunked = False
        plan.start_line, plan.start_offset, plan.ctx_session, plan.ctx_model, plan.ctx_turn = row
        plan.skip_leading_newline = False
    res.bytes += nbytes
    con.execute("DROP VIEW IF EXISTS stage_lines")
    stage.table = stage.empty
    return nbytes, sum(r[1] for r in written)


def _tally(con: duckdb.DuckDBPyConnection, res: IngestResult, run_files: dict[str, int]) -> None:
    """What this run wrote: rows of the files it read, from the line each file was first read from."""
    if not run_files:
        return
    con.register("_run_files", pa.table({"file": list(run_files), "start_line": list(run_files.values())}))
    con.execute("CREATE OR REPLACE TEMP TABLE run_files AS SELECT * FROM _run_files")
    con.unregister("_run_files")
    res.events, res.lines = cast("tuple[int, int]", sql.query(con, "ingest/run_tally").fetchone())
    for kind, n in con.execute(
        "SELECT s.kind, count(*) FROM skipped s JOIN run_files r ON s.file = r.file "
        "AND s.line >= r.start_line GROUP BY ALL"
    ).fetchall():
        res.skipped[kind] = n
    res.rejects = cast(
        "tuple[int]",
        con.execute(
            "SELECT count(*) FROM rejects x JOIN run_files r ON x.file = r.file AND x.line >= r.start_line"
        ).fetchone(),
    )[0]
