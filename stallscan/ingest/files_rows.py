"""The `files` rows of the ingest batches since the last flush (ingest/tx.py): line accounting, where a grown
file is re-read from, hashes.

Written in the batches' transaction, with their events, skips and rejects (queries/ingest/file_stats.sql).
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pyarrow as pa

from stallscan.ingest.plan import FilePlan, file_hashes
from stallscan.ingest.reader import ReadState
from stallscan.store import arrow, sql

# a `files` row as _update_files builds it (queries/store/schema.sql, without ingested_at)
FILES_ROW = pa.schema(
    [
        ("path", pa.string()),
        ("source_format", pa.string()),
        ("compression", pa.string()),
        ("size", pa.int64()),
        ("mtime", pa.float64()),
        ("head_hash", pa.string()),
        ("tail_hash", pa.string()),
        ("consumed_bytes", pa.int64()),
        ("consumed_lines", pa.int32()),
        ("ends_newline", pa.bool_()),
        ("pending_bytes", pa.int64()),
        ("resume_line", pa.int32()),
        ("resume_offset", pa.int64()),
        ("ctx_session", pa.string()),
        ("ctx_model", pa.string()),
        ("ctx_turn", pa.string()),
        ("n_lines", pa.int32()),
        ("n_event_lines", pa.int32()),
        ("n_skipped", pa.int32()),
        ("n_rejects", pa.int32()),
        ("n_events", pa.int32()),
        ("status", pa.string()),
    ]
)


def update_files(con: duckdb.DuckDBPyConnection, batch: list[FilePlan], states: list[ReadState]) -> None:
    sql.run(con, "ingest/file_stats")
    stats = {
        r[0]: r[1:]
        for r in con.execute(
            "SELECT file, n_lines, n_event_lines, n_skipped, n_rejects, n_events, resume_line, ctx_session, "
            "ctx_model, ctx_turn, held FROM batch_stats"
        ).fetchall()
    }
    sql.run(con, "ingest/run_tails")
    rows: list[tuple[Any, ...]] = []
    for _fid, (plan, st) in enumerate(zip(batch, states)):
        path = str(plan.path)
        n_lines, n_event_lines, n_skipped, n_rejects, n_events, resume_line, ctx_session, ctx_model, ctx_turn, held = (
            stats.get(path, (0, 0, 0, 0, 0, None, None, None, None, False))
        )
        offsets = np.concatenate(st.line_offsets) if st.line_offsets else np.empty(0, np.int64)
        if resume_line is None or resume_line < plan.start_line or resume_line - plan.start_line >= len(offsets):
            resume_line, resume_offset = st.consumed_lines + 1, st.consumed_bytes
            ctx_session, ctx_model = ctx_session or plan.ctx_session, ctx_model or plan.ctx_model
            ctx_turn = ctx_turn or plan.ctx_turn
        else:
            resume_offset = int(offsets[resume_line - plan.start_line])
        consumed_bytes, consumed_lines, ends_newline = st.consumed_bytes, st.consumed_lines, st.ends_newline
        if held:  # the chunk's tail was held back (hold_tail.sql): what is consumed ends where it starts
            consumed_bytes, consumed_lines, ends_newline = resume_offset, resume_line - 1, True
        head: str | None
        tail: str | None
        if plan.compression == "none" and st.hashes is not None and st.hashes[0] == consumed_bytes:
            head, tail = st.hashes[1:]  # (taken by the read: ingest/read_ahead.py)
        elif plan.compression == "none":  # (a held tail: consumed ends where it starts)
            head, tail = file_hashes(plan.path, consumed_bytes)
        else:
            head = tail = None
        status = "partial" if st.more else ("ok" if n_lines or st.pending_bytes else "empty")
        rows.append(
            (
                path,
                plan.fmt,
                plan.compression,
                -1 if st.more else plan.size,
                plan.mtime,
                head,
                tail,
                consumed_bytes,
                consumed_lines,
                ends_newline,
                st.pending_bytes,
                resume_line,
                resume_offset,
                ctx_session,
                ctx_model,
                ctx_turn,
                n_lines,
                n_event_lines,
                n_skipped,
                n_rejects,
                n_events,
                status,
            )
        )
    # one statement for the batch (executemany runs one INSERT per file: seconds for a batch of 500 files); a plain
    # INSERT when no file of it has a `files` row (FilePlan.known: set by the plan, and by tx.flush for a file read
    # on in a next chunk), the upsert's index look-ups otherwise (about 2.7 of 4 CPU ms for one new file)
    verb = "INSERT OR REPLACE" if any(p.known for p in batch) else "INSERT"
    con.register(
        "_files_rows",
        pa.Table.from_arrays([arrow.column(col, f.type) for col, f in zip(zip(*rows), FILES_ROW)], schema=FILES_ROW),
    )
    try:
        con.execute(f"{verb} INTO files SELECT *, now() FROM _files_rows")
    finally:
        con.unregister("_files_rows")
