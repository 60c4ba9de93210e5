"""A pass's batches of files read (bytes, newline scan, the `files` rows' hashes), each next one on a worker
thread while DuckDB parses and writes the one before.

The ingest's main thread is its critical path on two CPUs (docs/benchmarks.md, "first21": it carries 50-65 %
of the ingest's CPU): the read and newline scan of a batch (Python and numpy, about 0.07 CPU s per 128 MB
batch of small files) and each file's head / tail hashes for its `files` row (an open and 68 KB of md5 a file)
ran there while the second CPU was idle. The file I/O, numpy's scan and md5 let go of the GIL, so on a worker
they run beside the batch before's statements: its parse, then the replies' GROUP BY, the INSERT and the
bookkeeping, which keep fewer than two CPUs busy. Nothing changes in what is read: the same blocks, states and hashes as a
read in turn (tests/unit/test_read_ahead.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, cast

import duckdb

from stallscan.ingest.detect import SPECS
from stallscan.ingest.plan import FilePlan, file_hashes, read_errors, why_unreadable
from stallscan.ingest.reader import Arena, LineBlock, ReadState, iter_lines, read_array, read_whole
from stallscan.store import sql
from stallscan.store.beside import Beside

# a big file's chunk (bytes read a pass) stays 64 MB while a batch of files holds up to `batch_bytes` (128 MB): on
# one 1 GB file 128 MB chunks took more CPU (bench_ingest.py, fastest of 2: 14.15 s against 13.66; docs/benchmarks.md
# "first18"); fewer batches pay off where many small files share them
CHUNK_BYTES = 64 * 1024 * 1024


@dataclass
class Read:
    """One file of a batch as read: its blocks of lines, or why it could not be read."""

    plan: FilePlan
    state: ReadState
    blocks: list[LineBlock]
    unreadable: str | None = None


def read_batch(
    con: duckdb.DuckDBPyConnection | None, arena: Arena, batch: list[FilePlan], batch_bytes: int
) -> list[Read]:
    """Read a batch's files into `arena` (reset first: the batch read into it before is no longer staged), and a
    plain file's head / tail hashes up to what was read (ReadState.hashes). Needs the connection only for a file
    that may be one JSON array (`read_array`); without it, no file of the batch may be one."""
    arena.reset()
    out: list[Read] = []
    for plan in batch:
        state = ReadState(plan.start_offset, plan.start_line)
        try:
            array = (
                read_array(cast("duckdb.DuckDBPyConnection", con), plan.path, plan.compression, state)
                if plan.array
                else None
            )
            if array is not None:
                blocks = array
            elif SPECS[plan.fmt].whole_file:
                blocks = read_whole(plan.path, plan.compression, state)
            else:
                blocks = iter_lines(
                    plan.path,
                    plan.compression,
                    state,
                    plan.skip_leading_newline,
                    min(batch_bytes, CHUNK_BYTES) if plan.chunked else None,
                    arena,
                )
            got = list(blocks)
            if plan.compression == "none":
                state.hashes = (state.consumed_bytes, *file_hashes(plan.path, state.consumed_bytes))
            out.append(Read(plan, state, got))
        except read_errors() as exc:  # vanished, replaced or damaged since it was planned: its rows stay as they were
            out.append(Read(plan, state, [], why_unreadable(exc)))
    return out


class _Reading(Beside):
    """A batch read on a thread of its own (read_batch's arguments)."""

    def __init__(self, *args: Any) -> None:
        super().__init__(read_batch, *args, name="stallscan-read")


class ReadAhead:
    """A pass's batches as read. The first is read in its turn, the second meanwhile on a worker thread, and each
    next one on the worker from the moment the batch before starts its parse (`start_next`; started after the
    parse, the read was often not done when the steps after it were, and the ingest waited with a CPU idle:
    docs/benchmarks.md, "first24"). Two arenas take turns: a batch's lines stay staged until its last statement
    that reads them while the next batch is read into the other (in a held run's pass, batch._pass, that is its
    apart tables' parse: the next read starts before the write of the batch before, which reads no staged line) (a batch read in its turn reuses the arena of the batch before:
    no second arena). A batch with a file that may be one JSON array is read in its turn (`read_array` runs on
    the connection). Only within a pass: a big file's next chunk starts where the flush after the pass leaves its
    `files` row. `close` waits for a read under way (a failed batch: its arena must not go while read)."""

    def __init__(
        self, con: duckdb.DuckDBPyConnection, arenas: tuple[Arena, Arena], batches: list[list[FilePlan]], size: int
    ) -> None:
        self.con, self.arenas, self.batches, self.size = con, arenas, batches, size
        self.i = -1  # the batch taken last
        self.k = 0  # the arena its lines are in (a batch read in its turn reuses it: the second is for reads ahead)
        self.ahead: _Reading | None = None

    def __iter__(self) -> Iterator[list[Read]]:
        for i, batch in enumerate(self.batches):
            self.i = i
            with sql.timed("read + newline scan (main thread)"):
                ahead, self.ahead = self.ahead, None
                if ahead is not None:
                    reads, self.k = ahead.result(), 1 - self.k
                else:
                    if i == 0:  # (the second batch read on the worker while the first is read here)
                        self.start_next()
                    reads = read_batch(self.con, self.arenas[self.k], batch, self.size)
            yield reads

    def start_next(self) -> None:
        """Read the batch after the one taken last on the worker thread, unless there is none."""
        i = self.i + 1
        if i < len(self.batches) and self.ahead is None and not any(p.array for p in self.batches[i]):
            self.ahead = _Reading(None, self.arenas[1 - self.k], self.batches[i], self.size)

    def close(self) -> None:
        if self.ahead is not None:  # (its error, if any, is not the one to report: the batch's that stopped us is)
            self.ahead.join()
