"""The ingest's last COMMIT on a thread, so that the caller's reads go on while DuckDB checkpoints it.

A large run's last COMMIT is a checkpoint (`checkpoint_threshold` 0, ingest/batch.py): DuckDB first makes the
transaction's rows visible (its local storage appended to the tables, about a third of the COMMIT), then compresses
and writes them into the file on the committing thread alone. Reads and TEMP tables of other connections run beside
that checkpoint; a write to the database waits in DuckDB until it ends (docs/benchmarks.md, first26). A report
(cli/report_cmd.py) hands `ingest_paths` a `CommitBeside`: the run returns once the rows are visible, and the
report's labels read beside the checkpoint. `join()` waits for the COMMIT's end and raises its error, if any, in
the caller's thread; `wait()` only waits (before a database this run created is removed, or a connection closed).
"""

from __future__ import annotations

import contextlib
import threading
import time

import duckdb

from stallscan.store import sql

COMMIT = "COMMIT"  # (the thread's statement: tests make it fail)
POLL_SECONDS = 0.002  # between two looks at the events' count while the COMMIT makes its rows visible


class CommitBeside:
    def __init__(self) -> None:
        self._thread: threading.Thread | None = None
        self._error: BaseException | None = None

    def start(self, con: duckdb.DuckDBPyConnection, threshold: str) -> None:
        """COMMIT `con`'s open transaction on a thread, then set `checkpoint_threshold` back to `threshold` and
        CHECKPOINT (nothing to do after a COMMIT that checkpointed); the threshold is set back as soon as the rows
        are seen too. Returns once another connection sees the
        transaction's count of events, or once the COMMIT ended when that count is the one committed before or
        the COMMIT failed (its error is raised by `join`). (The count, not the events version in stallscan_meta,
        a row the transaction updates: that was seen only at the COMMIT's end in 6 of 6 traced runs.)"""
        look = con.cursor()  # (made before the thread starts: `con` is the thread's from then on)
        try:
            new = _count(con)  # (this transaction's own)
            old = _count(look)  # (the committed one)
            self._thread = threading.Thread(target=self._commit, args=(con, threshold), name="stallscan-commit")
            self._thread.start()
            while new != old and self._thread.is_alive():
                time.sleep(POLL_SECONDS)
                if _count(look) == new:  # (past the COMMIT's checkpoint decision: the threshold is read no more)
                    look.execute(f"SET checkpoint_threshold = '{threshold}'")  # (a global setting: before the
                    return  # caller's next COMMIT, which would else checkpoint too)
            self.wait()
        finally:
            look.close()

    def _commit(self, con: duckdb.DuckDBPyConnection, threshold: str) -> None:
        try:
            try:
                with sql.timed("COMMIT"):
                    con.execute(COMMIT)
            except BaseException:
                sql.rollback(con)
                raise
            con.execute(f"SET checkpoint_threshold = '{threshold}'")
            # (refused while another connection's write transaction is open: the database's close checkpoints then)
            with contextlib.suppress(duckdb.TransactionException), sql.timed("final CHECKPOINT"):
                con.execute("CHECKPOINT")  # leave a compact file: the next open has no WAL to replay
        except BaseException as exc:  # raised in the caller's thread by join()
            self._error = exc

    def wait(self) -> None:
        if self._thread is not None:
            self._thread.join()

    def join(self) -> None:
        self.wait()
        err, self._error = self._error, None
        if err is not None:
            raise err


def _count(con: duckdb.DuckDBPyConnection) -> int:
    return int(con.execute("SELECT count(*) FROM main.events").fetchall()[0][0])
