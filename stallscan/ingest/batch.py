"""Read, parse and write the planned files batch by batch (numpy, pyarrow and DuckDB; loaded only
when a run has something to read). The transaction policy, the staged lines and the per-batch steps."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, cast

import duckdb
import pyarrow as pa

from stallscan.ingest import tx as txn
from stallscan.ingest.detect import SPECS
from stallscan.ingest.failpoint import Failpoint
from stallscan.ingest.parse_apart import Apart
from stallscan.ingest.parse_batch import Held, parse_apart, parse_batch
from stallscan.ingest.plan import FilePlan
from stallscan.ingest.read_ahead import ReadAhead
from stallscan.ingest.reader import Arena, ReadState
from stallscan.ingest.staged import STAGE_ROWS, Stage, Staged, shift_fids, stage_batch
from stallscan.store import arrow, sql
from stallscan.store.beside import Beside
from stallscan.store.db import one_thread

if TYPE_CHECKING:
    from stallscan.ingest.result import IngestResult

BATCH_FILES = 2000
# a transaction spans batches until it holds this many events (4 DuckDB row groups) or this many bytes
# read: appends of at least a row group are written once, compressed, straight into the database file
COMMIT_ROWS = int(os.environ.get("STALLSCAN_COMMIT_ROWS") or 4 * 122_880)
COMMIT_BYTES = int(os.environ.get("STALLSCAN_COMMIT_BYTES") or 1 << 31)
# a run reading at least this many bytes holds the parse's large per-batch tables as Arrow (parse_batch.Held) and
# parses them in a second DuckDB instance, its own on one thread (_Apart). One threshold for both: the second
# instance's tables come back as Arrow, and holding alone (ing21: the temp tables converted) cost the 311 MB tree's
# first report 0.2-0.5 CPU s. Both together, 6 alternated pairs a size (docs/benchmarks.md "ing28"): the first
# report lower in wall and CPU from 71 MB up (the 311 MB tree: 3.40 -> 3.32 s, 4.89 -> 4.63 CPU s), even at 34 MB
# (1.28 -> 1.33 s wall, the same CPU); the ingest alone lower from 134 MB, the same at 71 MB, slower at 34 MB.
# $STALLSCAN_HOLD_FROM forces either path (tests: 1 or a huge number)
HOLD_FROM = int(os.environ.get("STALLSCAN_HOLD_FROM") or 64 * 1024 * 1024)


def run_batches(
    con: duckdb.DuckDBPyConnection,
    plans: list[FilePlan],
    res: IngestResult,
    touched: set[str],
    progress: Callable[[int, int], None] | None,
    total: int,
    batch_bytes: int,
    small: bool = False,
    open_last: bool = False,
) -> bool | None:
    """Ingest the plans batch by batch (at most `batch_bytes` read per batch, and at most that and
    read_ahead.CHUNK_BYTES per chunk of a big file). A transaction spans batches until it holds COMMIT_ROWS events (or
    COMMIT_BYTES read), and the run's last batch commits: DuckDB then writes whole row groups straight to
    the database file once, instead of logging every row to the WAL and rewriting it at the checkpoint.
    Each batch's `files` rows are in the same transaction as its rows (written for all the transaction's
    batches at once before its COMMIT, and at the end of each pass: ingest/tx.py), so a kill loses whole
    transactions only. Returns whether the caller should CHECKPOINT after the run: not for a `small` one (the
    caller's SMALL_RUN_BYTES: its COMMIT is no checkpoint either, its rows stay in the WAL until the database
    closes). open_last: when the last COMMIT would be a checkpoint (and no failpoint is set), leave the transaction
    open for the caller to commit (ingest/commit_beside.py) and return None. A run of HOLD_FROM bytes or more holds
    the parse's large tables as Arrow and parses in a second DuckDB instance, `con` on one thread (_Apart)."""
    done = 0
    tx_rows = tx_bytes = 0
    stage = Stage()
    arenas = (Arena(), Arena())  # a batch's lines and the next batch's, read ahead (ingest/read_ahead.py), in turn
    held = Held(con)
    hold = held if total >= HOLD_FROM else None  # (the parse's large per-batch tables as Arrow: parse_batch.Held)
    apart = _Apart(con) if hold is not None else None  # (a held run's parse instance: ingest/parse_apart.py)
    failpoint = Failpoint.from_env("ingest.commit")  # a crash test's stop ($STALLSCAN_FAILPOINT), else a no-op
    con.register("stage_raw", stage)
    # the totals of files read on from a held tail, per file (queries/ingest/run_tails.sql)
    con.execute(
        "CREATE OR REPLACE TEMP TABLE run_tails (file VARCHAR, n_event_lines BIGINT, n_events BIGINT, "
        "n_skipped BIGINT, n_rejects BIGINT, max_last INTEGER, max_last_at INTEGER, last_assist INTEGER)"
    )
    con.execute("BEGIN TRANSACTION")
    try:
        tx = txn.start(con)
        while plans:
            continued: list[FilePlan] = []
            # (closed on a failed batch: the read under way ends before the rollback)
            with contextlib.closing(ReadAhead(con, arenas, list(_batches(plans, batch_bytes)), batch_bytes)) as read:
                # (`lambda: tx`: the transaction's bookkeeping as it is when asked; a flush below replaces it)
                batches = _pass(con, stage, read, res, touched, continued, lambda: tx, hold, apart)  # noqa: B023
                for nbytes, nrows in batches:
                    done, tx_bytes, tx_rows = done + nbytes, tx_bytes + nbytes, tx_rows + nrows
                    if tx_rows >= COMMIT_ROWS or tx_bytes >= COMMIT_BYTES:
                        tx = txn.flush(con, tx)
                        with sql.timed("COMMIT"):
                            con.execute("COMMIT")
                        failpoint.hit()
                        con.execute("BEGIN TRANSACTION")
                        tx_rows = tx_bytes = 0
                    if progress:
                        progress(done, total)
            tx = txn.flush(con, tx, more=bool(continued))  # (the next chunks start where their files' rows say)
            plans = continued  # big files go on from where their last chunk stopped
        if apart is not None:  # (its memory freed and the threads set back before the last COMMIT's checkpoint)
            apart.close()
        if not small and txn.checkpoint_on_commit(con, tx_bytes):  # (run.py restores the threshold)
            con.execute("SET checkpoint_threshold = '0KB'")
            if open_last and not failpoint.at:
                return None
        with sql.timed("COMMIT"):
            con.execute("COMMIT")
        failpoint.hit()
    except BaseException:
        sql.rollback(con)
        raise
    finally:
        with contextlib.suppress(duckdb.Error):  # (a connection a failed write invalidated)
            con.unregister("stage_raw")
        held.close()
        if apart is not None:
            apart.close()
    return not small


def _batches(plans: list[FilePlan], batch_bytes: int) -> Iterator[list[FilePlan]]:
    """A pass's plans in batches of one format, as many as `batch_bytes` asks for but of about even bytes (each
    closed at the group's bytes over that count, or at BATCH_FILES files): the 311 MB tree's three batches are about
    104 MB each, not 128 + 128 + 55 MB. In a held run the first batch's parse and the last one's write run with
    nothing beside them (_pass); even batches made the tree's first report lower in wall in 8 of 8 alternated pairs
    and in CPU in 7 of 8, its peak RSS about 50 MiB lower (docs/benchmarks.md "first29"). A big file's chunk is
    bounded by the read (read_ahead.CHUNK_BYTES), not here."""
    by_fmt: dict[str, list[FilePlan]] = {}
    for p in plans:
        by_fmt.setdefault(p.fmt, []).append(p)
    for group in by_fmt.values():
        batch: list[FilePlan] = []
        size = 0
        whole = sum(p.size - p.start_offset for p in group)
        count = max(1, -(-whole // batch_bytes))  # (as many batches as batch_bytes asks for: the ceiling ...)
        target = -(-whole // count) if whole else batch_bytes  # (... of even bytes: the ceiling of whole / count)
        for p in group:
            batch.append(p)
            size += p.size - p.start_offset
            if size >= target or len(batch) >= BATCH_FILES:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch


class _Apart:
    """A held run's second DuckDB instance, made at its first batch of a format with `apart` tables
    (FormatSpec.apart): from then on the ingest's own instance runs on one worker thread (one switch a run).
    `close` (after the last batch, again on a failure: a no-op the second time) closes the instance and sets the
    threads back, so the last COMMIT's checkpoint runs on them as before."""

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con, self.stage = con, Stage()  # (its own staged lines: a batch parsed ahead is not the ingest's)
        self.apart: Apart | None = None
        self.threads = contextlib.ExitStack()

    def get(self, fmt: str) -> Apart | None:
        if not SPECS[fmt].apart:
            return None
        if self.apart is None:
            self.apart = Apart(self.con, self.stage)
            self.threads.enter_context(one_thread(self.con))
        return self.apart

    def close(self) -> None:
        try:
            self.threads.close()
        finally:
            if self.apart is not None:
                self.apart.close()
                self.apart = None


def _pass(
    con: duckdb.DuckDBPyConnection,
    stage: Stage,
    read: ReadAhead,
    res: IngestResult,
    touched: set[str],
    continued: list[FilePlan],
    tx: Callable[[], txn.Tx],
    held: Held | None,
    apart: _Apart | None,
) -> Iterator[tuple[int, int]]:
    """Parse and write a pass's batches in order, yielding each one's bytes read and events written once it is
    written (the caller may then flush and commit: `tx` gives the transaction's bookkeeping as it is then). In a held
    run a batch whose format parses apart (FormatSpec.apart) has those tables parsed in the second instance on a
    worker thread while the ingest's instance writes the batch before on the caller's: the two share no table (the
    apart tables read the staged lines alone), and the second CPU idled while the batch before's replies were
    grouped and written on the ingest's one thread (docs/benchmarks.md "first29"). The first such batch of a pass
    (nothing to write beside it) parses in its turn, as does every batch of another format."""
    prev: tuple[Staged, Beside | dict[str, pa.Table]] | None = None  # parsed (or parsing), not yet written
    try:
        for reads in read:
            staged = stage_batch(reads, res, continued, len(tx().plans) + (len(prev[0].batch) if prev else 0))
            parsing = apart.get(staged.batch[0].fmt) if apart is not None and staged is not None else None
            if prev is not None and isinstance(prev[1], Beside):  # (done before its lines' arena is read into)
                prev = (prev[0], prev[1].result())
            if parsing is None or staged is None:
                if prev is not None:
                    yield _write(con, stage, *_done(prev), res, touched, tx(), held, read.start_next)
                    prev = None
                yield _write(con, stage, staged, None, res, touched, tx(), held, read.start_next) if staged else (0, 0)
                continue
            read.start_next()
            lines = cast("_Apart", apart).stage  # (the second instance's staged lines)
            if prev is None:
                prev = (staged, _parse_apart(parsing, lines, staged))
                continue
            job = Beside(_parse_apart, parsing, lines, staged, name="stallscan-parse")
            last, prev = prev, (staged, job)
            yield _write(con, stage, *_done(last), res, touched, tx(), held, read.start_next)
        if prev is not None:
            last, prev = prev, None
            yield _write(con, stage, *_done(last), res, touched, tx(), held, read.start_next)
    finally:
        if prev is not None and isinstance(prev[1], Beside):  # (a failure: the parse under way ends first)
            prev[1].join()


def _done(prev: tuple[Staged, Beside | dict[str, pa.Table]]) -> tuple[Staged, dict[str, pa.Table]]:
    return prev[0], cast("dict[str, pa.Table]", prev[1].result() if isinstance(prev[1], Beside) else prev[1])


def _parse_apart(parsing: Apart, lines: Stage, staged: Staged) -> dict[str, pa.Table]:
    """A staged batch's apart tables, parsed in the second instance (on whichever thread calls), whose staged
    lines are `lines`."""
    lines.table = staged.lines
    try:
        parsing.batch(staged.files, "ingest/stage_lines_text" if staged.text else "ingest/stage_lines")
        return parse_apart(parsing.con, staged.batch[0].fmt, staged.longest)
    finally:
        lines.table = lines.empty


def _write(
    con: duckdb.DuckDBPyConnection,
    stage: Stage,
    staged: Staged,
    parsed: dict[str, pa.Table] | None,
    res: IngestResult,
    touched: set[str],
    tx: txn.Tx,
    held: Held | None,
    read_next: Callable[[], None],
) -> tuple[int, int]:
    """Parse one staged batch of same-format files (a big file: one chunk), but for the apart tables in `parsed`,
    and write it inside the open transaction; its files' bookkeeping is left to the flush (`tx`). Without `parsed`,
    `read_next` is called just before its parse (the next batch's read starts). Returns the bytes read and the
    events written."""
    batch, states = staged.batch, staged.states
    if staged.fid0 != len(tx.plans):  # (a flush came between its staging and now: its fids start at 0 again)
        by = len(tx.plans) - staged.fid0
        parsed = {k: shift_fids(t, by) for k, t in parsed.items()} if parsed is not None else None
        staged.files, staged.lines = shift_fids(staged.files, by), shift_fids(staged.lines, by)
        staged.lines = pa.Table.from_batches(staged.lines.to_batches(max_chunksize=STAGE_ROWS), staged.lines.schema)
    con.register("_batch_files", staged.files)
    con.execute("CREATE OR REPLACE TEMP TABLE batch_files AS SELECT * FROM _batch_files")
    con.unregister("_batch_files")
    stage.table = staged.lines
    if parsed is None:
        # the next batch's read starts before the parse, not after it: started after it, the read was often not
        # done when the steps after the parse (the replies' GROUP BY, the INSERT, the bookkeeping) were, and the
        # ingest waited for it with a CPU idle (0.2-0.3 s of the 311 MB tree's second batch; "first24")
        read_next()
    parse_batch(con, batch[0].fmt, staged.longest, held, text=staged.text, given=parsed)
    sql.run(con, "ingest/batch_keys")
    if any(st.more for st in states):  # the rows a next chunk re-reads are held back (see hold_tail.sql)
        sql.run(con, "ingest/hold_tail")
    else:
        con.execute("CREATE OR REPLACE TEMP TABLE held (fid INTEGER, from_line INTEGER)")
        con.execute(
            "CREATE OR REPLACE TEMP TABLE held_events (fid INTEGER, line INTEGER, last_line INTEGER, role VARCHAR, "
            "session_id VARCHAR, model VARCHAR, turn_id VARCHAR)"
        )
    if batch[0].fmt == "openai_chat":
        sql.run(con, "ingest/openai_chat_ts_insert")
    else:
        con.execute(
            "CREATE OR REPLACE TEMP TABLE batch_tsq (fid INTEGER, line INTEGER, part INTEGER, ts_quality VARCHAR)"
        )
    # the rows the batch replaces; a file without a `files` row has none (its rows would have been written
    # with it, in one transaction), so a batch of new files skips the four statements
    replaces = any(p.known for p in batch)
    if replaces:  # (batch_from: replace_rows.sql's only variable, set for it alone)
        con.execute("SET VARIABLE batch_from = (SELECT min(start_line) FROM batch_files)")
        sql.run(con, "ingest/replace_rows")
    sql.run(con, "ingest/ingest_commit")
    if cast("tuple[bool]", con.execute("SELECT EXISTS (FROM seq_fix)").fetchall()[0])[0]:
        sql.run(con, "ingest/renumber_seq")  # (planning its UPDATE costs more than asking first)
    _book_damage(con, batch, states)
    if batch[0].fmt == "openai_chat":
        sql.run(con, "ingest/openai_chat_ts_quality")
    sql.run(con, "ingest/tx_keep")
    # the sessions written, with their rows (batch_seq: the keys of the rows just written), and those whose
    # rows were replaced or removed (n NULL)
    written = con.execute(
        "SELECT session_id, count(*) AS n FROM batch_seq GROUP BY session_id"
        + (" UNION ALL SELECT session_id, NULL FROM removed" if replaces else "")
    ).fetchall()
    touched.update(r[0] for r in written if r[1] is not None)
    tx.add(batch, states, list(dict.fromkeys(r[0] for r in written)))
    res.bytes += staged.nbytes
    con.execute("DROP VIEW IF EXISTS stage_lines")
    stage.table = stage.empty
    return staged.nbytes, sum(r[1] or 0 for r in written)


def _book_damage(con: duckdb.DuckDBPyConnection, batch: list[FilePlan], states: list[ReadState]) -> None:
    """A gzip / zstd stream that stopped decoding: its lines that decoded are read; the line the damage cut
    and everything after it (which cannot be counted) are one reject with the reason."""
    for plan, st in zip(batch, states):
        if st.damaged:
            excerpt = st.damaged_excerpt.decode("utf-8", errors="backslashreplace") or None
            con.execute(
                "INSERT INTO rejects VALUES (?, ?, ?, ?)", [str(plan.path), st.damaged_line, st.damaged, excerpt]
            )


def tally(con: duckdb.DuckDBPyConnection, res: IngestResult, run_files: dict[str, int]) -> None:
    """What this run wrote: rows of the files it read, from the line each file was first read from."""
    if not run_files:
        return
    con.register(
        "_run_files",
        arrow.table(
            {"file": arrow.strings(list(run_files)), "start_line": arrow.column(list(run_files.values()), pa.int64())}
        ),
    )
    con.execute("CREATE OR REPLACE TEMP TABLE run_files AS SELECT * FROM _run_files")
    con.unregister("_run_files")
    res.events, res.lines, res.files_with_events, res.rejects, kinds = cast(
        "tuple[int, int, int, int, list[tuple[str, int]]]", sql.query(con, "ingest/run_tally").fetchall()[0]
    )
    for kind, n in kinds:
        res.skipped[kind] = n
    if not any(kind.startswith("unknown_shape:") for kind in res.skipped):
        return  # (unknown_shapes.sql counts exactly those of the run's skipped lines: none)
    cur = sql.query(con, "ingest/unknown_shapes", {"files": list(run_files), "start_lines": list(run_files.values())})
    cols = [d[0] for d in cur.description]
    res.unknown_shapes = [dict(zip(cols, r)) for r in cur.fetchall()]
