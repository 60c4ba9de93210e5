"""A pass's parses on a second connection, each beside the batch before's writes (ingest/batch.py).

After a batch's parse statement (which keeps both CPUs busy) the ingest's connection runs the batch's writes: the
key columns, the events INSERT, the skips and rejects, the bookkeeping, each keeping fewer than two CPUs busy
(docs/benchmarks.md, "first21"). Here the next batch's parse runs meanwhile on a cursor of its own, in a thread,
and hands its outputs (`OUTPUTS`: the tables and views queries/ingest/ingest_commit.sql and the steps around it
read) to the ingest's connection as Arrow tables under the same names (parse_batch.Held: registered once a run,
swapped per batch). The rows are those of a parse on the ingest's connection (tests/unit/test_ingest_overlap.py).

The cursor is not in the ingest's transaction: it sees what earlier transactions committed only. So a pass is
parsed there only when no parse of it can read a row the run wrote (`eligible`): every file read from its start
and unknown to the database (no rows of its own to read back or replace), the lines staged per file (not a
JSON-array file: read_array runs on the ingest's connection), and at least two batches to overlap.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, cast

import duckdb
import pyarrow as pa

from stallscan.ingest.detect import SPECS
from stallscan.ingest.parse_batch import LONG_LINE, Held, _drop_outputs, parse_batch
from stallscan.ingest.plan import FilePlan
from stallscan.ingest.reader import ReadState

# what the writes after a parse read of it (parse_batch.py's outputs)
OUTPUTS = ("fmt_events", "fmt_fates", "fmt_ctx", "fmt_resume")
# the formats parsed so: those whose parse reads only the batch's lines and files, and whose writes read only
# OUTPUTS (the Claude parse reads `events` for a file's earlier lines, which a fresh file has none of)
FORMATS = frozenset({"claude_code"})
# the ingest's session variables a parse reads (set on the cursor as on the ingest's connection)
VARIABLES = ("lenient_json", "naive_tz", "otlp_conversation_attr")


def eligible(batches: list[list[FilePlan]]) -> bool:
    """Whether a pass's batches are parsed on the second connection (see the module's doc)."""
    return len(batches) >= 2 and all(
        p.fmt in FORMATS and not SPECS[p.fmt].whole_file and not p.known and not p.array and p.start_offset == 0
        for b in batches
        for p in b
    )


@dataclass
class Staged:
    """One batch as the parse takes it: its lines (fid, line, raw), its files' table, what parse_batch asks."""

    lines: pa.Table
    files: pa.Table
    fmt: str
    longest: int
    text: bool


class Parser:
    """Parses staged batches one at a time on a cursor of the ingest's connection, in a thread; `result` waits
    for the batch submitted last and hands its outputs to the ingest's connection (`held`). An error in the
    thread is raised by `result`; `close` interrupts a parse under way and waits for it."""

    def __init__(self, con: duckdb.DuckDBPyConnection, held: Held, stage: Any) -> None:
        from stallscan.store.db import cursor

        _drop_outputs(con)  # (the names the outputs take: an earlier run's parse views on this connection)
        self.held = held
        self.stage = stage  # (batch._Stage: its table swapped per batch, registered once on the cursor)
        self.cur = cursor(con)
        for name in VARIABLES:
            value = con.execute(f"SELECT getvariable('{name}')").fetchall()[0][0]
            if value is not None:
                self.cur.execute(f"SET VARIABLE {name} = ?", [value])
        self.cur.register("stage_raw", stage)
        self.thread: threading.Thread | None = None
        self.out: dict[str, pa.Table] = {}
        self.exc: BaseException | None = None

    def submit(self, staged: Staged) -> None:
        """Start the batch's parse (the one before must have been taken by `result`)."""
        self.out, self.exc = {}, None
        self.thread = threading.Thread(target=self._run, args=(staged,), name="stallscan-parse")
        self.thread.start()

    def _run(self, staged: Staged) -> None:
        cur = self.cur
        try:
            self.stage.table = staged.lines
            cur.register("_batch_files", staged.files)
            cur.execute("CREATE OR REPLACE TEMP TABLE batch_files AS SELECT * FROM _batch_files")
            cur.unregister("_batch_files")
            cur.execute("SET VARIABLE batch_from = (SELECT min(start_line) FROM batch_files)")
            parse_batch(cur, staged.fmt, staged.longest, None, text=staged.text)
            self.out = {name: cur.sql(f"FROM {name}").to_arrow_table() for name in OUTPUTS}
        except BaseException as exc:  # re-raised in the ingest's thread by result()
            self.exc = exc
        finally:
            self.stage.table = self.stage.empty  # (the lines' arena is read into again)
            with contextlib.suppress(duckdb.Error):  # (after an interrupt or a failed parse: its error is the one)
                cur.execute("DROP VIEW IF EXISTS stage_lines")

    def result(self) -> None:
        """Wait for the batch submitted last; its outputs go to the ingest's connection under their names."""
        thread, self.thread = self.thread, None
        if thread is not None:
            thread.join()
        if self.exc is not None:
            raise self.exc
        for name in OUTPUTS:
            self.held.put(name, self.out[name])
        self.out = {}

    def close(self) -> None:
        if self.thread is not None:
            self.cur.interrupt()
            self.thread.join()
            self.thread = None
        try:
            self.cur.unregister("stage_raw")
            self.cur.close()
        finally:
            self.held.close()


Parsed = tuple[list[FilePlan], list[ReadState], int, Staged]  # a batch's files, their states, its bytes, its lines


def run_pass(
    parser: Parser,
    read: Any,
    prepare: Callable[[Any, int], tuple[list[FilePlan], list[ReadState], int, Staged | None]],
    write: Callable[[Parsed], int],
    tx: Callable[[], Any],
    written: Callable[[int, int], None],
) -> None:
    """A pass's batches (`read`: read_ahead.ReadAhead), each parsed by `parser` while the ingest's connection writes
    the batch before it (`write`, then `written`: batch.py's) and the batch after it is read ahead. `prepare(reads,
    fid0)` stages a batch, its files' fids from fid0; tx(): the open transaction's batches (a write may commit, the
    next batches going to a new one). A failure in either thread stops both: the parse under way is interrupted
    and waited for (`close`), and the error raised here."""
    pending: Parsed | None = None
    try:
        for reads in cast("Iterable[Any]", read):
            ahead = len(pending[0]) if pending is not None else 0  # (fids of the batch parsed, not yet written)
            batch, states, nbytes, staged = prepare(reads, tx().next_fid() + ahead)
            if staged is None:
                written(nbytes, 0)
                continue
            if pending is not None:
                parser.result()
                if staged.longest > LONG_LINE:  # (its parse sets the database's memory and threads: none beside it)
                    written(pending[2], write(pending))
                    pending = None
            parser.submit(staged)
            read.start_next()  # (into the arena of the batch parsed before: its outputs are Arrow tables now)
            if pending is not None:
                written(pending[2], write(pending))
            pending = (batch, states, nbytes, staged)
        if pending is not None:
            parser.result()
            written(pending[2], write(pending))
    finally:
        parser.close()
