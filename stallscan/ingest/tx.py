"""The batches of the open ingest transaction, booked together.

Each batch writes its events, skips and rejects (queries/ingest/ingest_commit.sql); the `files` rows of its
files (file_stats.sql + the upsert), the run's held-tail totals (run_tails.sql) and the changed-sessions log
(store/stamps.py) are written by `flush`, once for all the batches since the last flush: before each COMMIT
and at the end of each pass over the files. Those statements cost DuckDB tens of milliseconds each to plan
whatever a batch holds, and a run of many formats has a batch per format. The flush is in the batches'
transaction, so a kill still loses whole transactions only. A pass reads each file once, so a flush sees
each file once; a big file's next chunk (in the next pass) reads its `files` row after the flush.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from stallscan.ingest.files_rows import update_files
from stallscan.ingest.plan import FilePlan
from stallscan.ingest.reader import ReadState
from stallscan.store import arrow, sql, stamps


@dataclass
class Tx:
    """What the batches since the last flush read: their files in fid order (a batch's fids follow the
    previous batch's, so the gathered parse outputs of tx_tables.sql keep them apart), each file's batch
    number (1..), the sessions each batch changed (rows written, replaced or removed) and the files a next
    chunk reads on."""

    plans: list[FilePlan] = field(default_factory=list)
    states: list[ReadState] = field(default_factory=list)
    bnos: list[int] = field(default_factory=list)
    batches: int = 0
    changed_k: list[int] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    continued: list[FilePlan] = field(default_factory=list)

    def add(self, plans: list[FilePlan], states: list[ReadState], sessions: list[str]) -> None:
        """Book one written batch: its readable files (fids len(self.plans)..) and the sessions it changed."""
        self.batches += 1
        self.plans.extend(plans)
        self.states.extend(states)
        self.bnos.extend([self.batches] * len(plans))
        self.changed_k.extend([self.batches] * len(sessions))
        self.changed.extend(sessions)
        self.continued.extend(p for p, st in zip(plans, states) if st.more)


def start(con: duckdb.DuckDBPyConnection) -> Tx:
    sql.run(con, "ingest/tx_tables")
    return Tx()


def flush(con: duckdb.DuckDBPyConnection, tx: Tx, more: bool = True) -> Tx:
    """Write the `files` rows, run_tails and the changes log of the batches in `tx`, then move the files a
    next chunk reads on to where that chunk starts. Returns an empty Tx for the next batches; more=False: no
    batch follows (the run's last flush), so the gathering tables are not made again (4 statements)."""
    if not tx.batches:
        return tx
    con.register(
        "_tx_files",
        arrow.table(
            {
                "fid": arrow.column(list(range(len(tx.plans))), pa.int32()),
                "file": arrow.strings([str(p.path) for p in tx.plans]),
                "start_line": arrow.column([p.start_line for p in tx.plans], pa.int32()),
                "bno": arrow.column(tx.bnos, pa.int32()),
            }
        ),
    )
    con.execute("CREATE OR REPLACE TEMP TABLE tx_files AS SELECT * FROM _tx_files")
    con.unregister("_tx_files")
    con.execute("SET VARIABLE tx_from = (SELECT min(start_line) FROM tx_files)")
    with sql.timed("files rows (file_stats + upsert)"):
        update_files(con, tx.plans, tx.states)
    # the events change counter and the sessions each batch changed: derived tables replay only those
    with sql.timed("record_changes"):
        con.register(
            "_tx_changed",
            arrow.table({"k": arrow.column(tx.changed_k, pa.int64()), "session_id": arrow.strings(tx.changed)}),
        )
        try:
            stamps.record_batches(con, tx.batches, "SELECT k, session_id FROM _tx_changed")
        finally:
            con.unregister("_tx_changed")
    for plan in tx.continued:
        row = con.execute(
            "SELECT resume_line, resume_offset, ctx_session, ctx_model, ctx_turn FROM files WHERE path = ?",
            [str(plan.path)],
        ).fetchall()[0]
        if row[1] <= plan.start_offset:  # one open event fills the chunk: read the rest in one pass
            plan.chunked = False
        plan.start_line, plan.start_offset, plan.ctx_session, plan.ctx_model, plan.ctx_turn = row
        plan.skip_leading_newline = False
        plan.known = True
    return start(con) if more else Tx()


def checkpoint_on_commit(con: duckdb.DuckDBPyConnection, tx_bytes: int) -> bool:
    """Whether the run's last COMMIT may be a checkpoint (`checkpoint_threshold` 0): a transaction under a
    row group of events otherwise goes to the WAL at the COMMIT and, compressed, into the file again at the
    final CHECKPOINT a moment later. A checkpoint that fails on a full disk leaves the file grown (DuckDB keeps
    the blocks it wrote) where a failed WAL write gives the space back, so only when the disk holds twice the
    bytes this transaction read and the WAL so far, plus 64 MB: about what the WAL write alone would need
    before the final CHECKPOINT writes the same rows again. Not for a database in memory."""
    row = sql.first(con.execute("SELECT path FROM duckdb_databases() WHERE database_name = current_database()"))
    path = row[0] if row else None
    if not path:
        return False
    try:
        wal = os.path.getsize(path + ".wal") if os.path.exists(path + ".wal") else 0
        st = os.statvfs(os.path.dirname(os.path.abspath(path)))
    except OSError:
        return False
    return st.f_bavail * st.f_frsize >= 2 * (tx_bytes + wal) + (64 << 20)
