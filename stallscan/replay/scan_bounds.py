"""The turn boundaries' previous-reply scan, in batches of whole sessions (issue 21).

For every user-role event (and tool result) the router needs the last assistant reply before it in its
session (seq order): its event id, its completion report and the gap from its end. `prev_replies(con)`
computes them with the segmented scans of `stallscan/replay/scan.py` over the narrow columns of
`queries/replay/scan_boundaries.sql`, read in storage order in batches of BATCH_ROWS rows:

* ingest appends a file's lines together, so a session's rows are near each other: the sessions of a batch
  that go on in the next batch are carried into it (a session longer than a batch is carried until it
  ends), the others are scanned; the output is put back in rowid order at the end when carried rows were
  stored between scanned ones;
* inside a batch the walk order is found as `scan.walk_of` finds it (the storage order when it is already
  grouped by session with seq rising, else one lexsort of the batch);
* a session met again after it was scanned (its rows spread over more than two batches with a batch
  between them that does not hold it), or rowids not rising from batch to batch, stops the batching: the scan then starts again over the whole table at once, which
  is correct in any storage order.

Only the user / tool rows leave the scan: one Arrow row per such event in storage order (rid,
prev_event_id, prev_reply_status, gap_raw_s), which turn_boundaries.sql joins to those events on rowid. Python holds one batch of narrow columns at a time plus that output
(about 25 bytes and the previous reply's id per user / tool event), so the replay stays inside the
process's memory budget (stallscan.store.db.memory_budget) at any number of events.
"""

from __future__ import annotations

from collections.abc import Iterator

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from stallscan.replay import scan
from stallscan.store import arrow, sql

BATCH_ROWS = 1 << 20  # events per batch of the scan (tests set it small to cut sessions across batches)
STATUSES = ("truncated", "cancelled", "failed", "tool_calls", "empty", "final")  # scan_boundaries.sql's codes
OUTPUT = pa.schema(
    [
        ("rid", pa.int64()),
        ("prev_event_id", pa.string()),
        ("prev_reply_status", pa.dictionary(pa.int8(), pa.string())),
        ("gap_raw_s", pa.float64()),
    ]
)


class _Interleaved(Exception):
    """The storage order does not hold sessions together across batches (batching cannot be used)."""


def prev_replies(con: duckdb.DuckDBPyConnection) -> pa.Table:
    """The previous reply of every user / tool event (see the module docstring), one row per such event in
    storage order."""
    with sql.timed("scan previous replies (batched)"):
        try:
            out = _concat(list(_batched(con)))
        except _Interleaved:
            pass
        else:  # (a carried session's rows come after rows stored behind them: back to storage order)
            rid = scan._np(out.column("rid"), np.int64)
            if len(rid) > 1 and not bool(np.all(rid[1:] > rid[:-1])):
                out = out.take(arrow.from_numpy(np.argsort(rid, kind="stable")))
            return out
    with sql.timed("scan previous replies (whole table)"):
        return _concat([_step(scan.fetch(con, "scan_boundaries"))])


def _concat(parts: list[pa.Table]) -> pa.Table:
    return pa.concat_tables(parts) if parts else OUTPUT.empty_table()


def _batched(con: duckdb.DuckDBPyConnection) -> Iterator[pa.Table]:
    """The scan over batches of whole sessions; raises _Interleaved when the storage order does not allow it."""
    con.complete()  # (a DB-API result left half read would block the relation)
    reader = sql.relation(con, "replay/scan_boundaries").to_arrow_reader(BATCH_ROWS)
    done: list[pa.Array] = []  # the session ids of the rows already scanned
    pending: pa.Table | None = None  # rows read, not scanned yet (storage order)
    last_rid = -1
    for batch in _gather(reader):
        rid = batch.column("rid")
        if pc.min(rid).as_py() <= last_rid:
            raise _Interleaved
        last_rid = pc.max(rid).as_py()
        nxt = pc.unique(batch.column("session_id"))
        if pending is not None:  # scan the sessions that do not go on in this batch, carry the others
            goes_on = pc.is_in(pending.column("session_id"), value_set=nxt)
            ready, pending = pending.filter(pc.invert(goes_on)), pending.filter(goes_on)
            if ready.num_rows:
                done.append(pc.unique(ready.column("session_id").combine_chunks()))
                yield _step(scan.walk_of(ready))
        if done and pc.any(pc.is_in(nxt, value_set=pa.concat_arrays(done))).as_py():
            raise _Interleaved  # a session already scanned goes on here
        pending = batch if pending is None else pa.concat_tables([pending, batch])
    if pending is not None:
        yield _step(scan.walk_of(pending))


def _gather(reader: pa.RecordBatchReader) -> Iterator[pa.Table]:
    """The reader's record batches (DuckDB hands over about 120,000 rows at a time) as tables of at least
    BATCH_ROWS rows, the last one smaller."""
    parts: list[pa.RecordBatch] = []
    rows = 0
    for rb in reader:
        if rb.num_rows:
            parts.append(rb)
            rows += rb.num_rows
        if rows >= BATCH_ROWS:
            yield pa.Table.from_batches(parts)
            parts, rows = [], 0
    if parts:
        yield pa.Table.from_batches(parts)


def _step(w: scan.Walk) -> pa.Table:
    """The output rows of one walk (whole sessions): its user / tool events in storage order."""
    c = w.cols
    prev = w.prev_where(c["reply"])  # walk positions
    has = prev >= 0
    p = np.maximum(prev, 0)
    timed = has & c["t_ok"] & c["t_ok"][p]
    gap = (c["t_us"] - c["t_us"][p]) / 1e6
    status = np.where(has, c["status"][p], -1).astype(np.int8)
    prev_storage = w.positions_to_storage(prev)
    keep = w.to_storage(c["ut"])  # storage order from here on
    prev_storage = w.to_storage(prev_storage)[keep]
    status = w.to_storage(status)[keep]
    timed = w.to_storage(timed)[keep]
    return arrow.table(
        {
            "rid": c["rid_storage"][keep],
            "prev_event_id": w.take_storage("reply_id", prev_storage),
            "prev_reply_status": pa.DictionaryArray.from_arrays(
                arrow.from_numpy(status, mask=status < 0), arrow.strings(list(STATUSES))
            ),
            "gap_raw_s": arrow.from_numpy(w.to_storage(gap)[keep], mask=~timed),
        },
        schema=OUTPUT,
    )
