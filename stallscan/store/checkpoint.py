"""The report's writes checkpointed on a thread beside its last reads, so that the database's close, the command's
last step on one CPU, checkpoints only what is written after them (the memo's put, the change log's prune).

After one new session the report's derives (the ingest's rows, the labels, the replays' incremental runs, the
summary cells, the sweep's bins) all commit to the WAL; the close of the database then wrote them into the file
(0.04-0.15 s on the 311 MB tree's and the 1M-event databases: the events' and the derived tables' last row
groups written again), after the output was ready. The caller that will close the database arms one checkpoint
for a block (`early`), naming how many writers run in it; each says when it has written (`writes_done`: with the
report's lanes, the stall section's first part on the second lane, and the sweep once its stored cells are up to
date and read, before its numpy work), and the CHECKPOINT runs on a cursor of its own in a thread once the last
one has. `Early.join()` waits for it before the caller's next write (DuckDB would make that write
wait anyway) and raises its error. DuckDB refuses a CHECKPOINT at times while other cursors' statements run
("other write transactions active", TransactionException: seen beside two reads, the sweep's and the timelines'):
it is tried again every RETRY_SECONDS, and once more when the caller waits (nothing runs beside it then); refused
then too, it is left to the close, as before (docs/benchmarks.md, "one30"). Nothing is armed outside such a block: the sweep
command, the API and the first report (report/build.py checkpoints that one beside its own last reads) are as
before.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import duckdb

from stallscan.store.beside import Beside

CHECKPOINT = "CHECKPOINT"  # (the thread's statement: tests make it fail)
# a CHECKPOINT refused beside the other lane's or the caller's statements is tried again after this long, until the
# caller waits for it (then once more, with nothing beside it)
RETRY_SECONDS = 0.002


class Early:
    """One CHECKPOINT on a cursor of `con` (the block's connection, open until after the block), started once
    `writers` writers have said they are done (`written`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, writers: int) -> None:
        self._con = con
        self._left = writers
        self._job: Beside | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()  # (set by wait: the next try is the last)
        self._tried = False
        self.refused = False  # (the CHECKPOINT met an open write transaction: the close checkpoints)

    @property
    def started(self) -> bool:
        return self._job is not None

    def written(self, con: duckdb.DuckDBPyConnection) -> None:
        """A writer is done (on its own thread and connection `con`, con or a cursor, which it uses no more to
        write)."""
        # a result of con's not read to its end keeps its statement's transaction open until con's next statement,
        # and the CHECKPOINT is refused beside it: run it to its end first (report/build.py _checkpoint_beside)
        con.complete()
        with self._lock:
            self._left -= 1
            if self._left != 0:
                return
            self._job = Beside(self._run, self._con, name="stallscan-checkpoint")

    def _run(self, con: duckdb.DuckDBPyConnection) -> None:
        """(On the job's thread; any other error is raised in the caller's thread by join().)"""
        with con.cursor() as cur:  # (made here: a CHECKPOINT needs none of a report cursor's set-up)
            while True:
                last = self._stop.wait(RETRY_SECONDS) if self._tried else False
                self._tried = True
                try:
                    cur.execute(CHECKPOINT)
                    return
                except duckdb.TransactionException:
                    if last:
                        self.refused = True
                        return

    def wait(self) -> None:
        """Wait for the CHECKPOINT's end: a refused one is tried once more now (nothing runs beside it then)."""
        self._stop.set()
        if self._job is not None:
            self._job.join()

    def join(self) -> None:
        """Wait for the CHECKPOINT (if one started) and raise its error, if any."""
        self._stop.set()
        if self._job is not None:
            self._job.result()


_ARMED: list[Early] = []  # (the innermost block's last; read by writes_done on whichever lane runs the sweep)


@contextlib.contextmanager
def early(con: duckdb.DuckDBPyConnection, writers: int) -> Iterator[Early]:
    """Arm one checkpoint for the block, started once `writers` writers said they are done (writes_done); it is
    never left running past the block (its error, after a failure in the block, is the block's to report: the
    first one)."""
    e = Early(con, writers)
    _ARMED.append(e)
    try:
        yield e
    finally:
        _ARMED.remove(e)
        e.wait()


def writes_done(con: duckdb.DuckDBPyConnection) -> None:
    """A writer of the armed block has written what it writes (on `con`): the last one starts the block's
    checkpoint (nothing when none is armed)."""
    if _ARMED:
        _ARMED[-1].written(con)
