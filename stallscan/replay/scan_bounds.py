"""The turn boundaries' previous-reply scan, in batches of whole sessions (issue 21).

For every user-role event (and tool result) the router needs the last assistant reply before it in its
session (seq order): its seq, its completion report and the gap from its end. `prev_replies(con)`
computes them with the segmented scans of `stallscan/replay/scan.py` over the narrow columns of
`queries/replay/scan_boundaries.sql`, read by rowid ranges of `scan_batches.batch_rows()` rows (`BATCH_ROWS` when set)
through `scan_batches.scan_into`, as the stall replay's turn scan is:

* ingest appends a file's lines together, so a session's rows are near each other: the sessions of a range
  that go on in the next range are carried into it (a session longer than a range is carried until it ends),
  the others are scanned;
* inside a batch the walk order is found as `scan.walk_of` finds it (the storage order when it is already
  grouped by session with seq rising, else one stable sort of the batch by a session-and-seq key);
* the rows read are cut where no session straddles (a session in several runs, as an ingest batch stores it,
  is carried whole); a session met again after it was scanned (a grown session's rows at the table's end)
  stops the batching: the scan then walks the sessions that come back apart and runs the batches again
  without them, merging their rows into the output in rowid order (`scan_batches.scan_into`,
  `stallscan/replay/scan_apart.py`); when those hold many rows, over shares of the sessions by a hash of
  their ids, the output put back in rowid order. Both are correct in any storage order.

The output is the DuckDB temp table `tb_scan`, one row per user / tool event (scan_boundaries.sql's status -2,
the rows turn_boundaries.sql replays; and a NULL row for any other role between 'tool' and 'user', status -3, as
turn_boundaries.sql reads that range of roles beside it), in storage order (rid, prev_seq, prev_status,
gap_raw_s): the reply's seq, not its event id (fetching and writing the ids cost more; the view
`turn_boundaries` reads the id from `events` by session and seq, docs/replay-scan.md "narrow21"). turn_boundaries.sql reads it beside those events with POSITIONAL JOIN (each row checks its rowid), so
no join on the rowid is needed. Python holds one batch of narrow columns at a time; the output is in DuckDB
(inside its memory limit, spillable).
"""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np

from stallscan.replay import scan, scan_batches
from stallscan.store import arrow, sql

BATCH_ROWS: int | None = None  # events per batch (None: scan_batches.batch_rows(); tests set it small)
STATUSES = ("truncated", "cancelled", "failed", "tool_calls", "empty", "final")  # scan_boundaries.sql's codes


def prev_replies(con: duckdb.DuckDBPyConnection) -> None:
    """(Re)create the temp table `tb_scan`: the previous reply of every user / tool event (see the module
    docstring), one row per user / tool event of `events`, in storage order."""
    with sql.timed("scan previous replies"):
        scan_batches.scan_into(con, "scan_boundaries", "events", None, _step, BATCH_ROWS, sides=("tb_scan",))


def _step(w: scan.Walk) -> dict[str, Any]:
    """The rows of `tb_scan` of one walk (whole sessions): the user / tool events' only (and any other role's
    between 'tool' and 'user', all NULL), in storage order, each with its rowid (rid), prev_seq (the reply's seq),
    prev_status (the previous reply's status as a 1-based code into STATUSES) and gap_raw_s; NULL where the
    event has no reply before it (the gap: and where either time is not trustworthy)."""
    c = w.cols
    # Only the previous reply is found in walk order; the rest is read in storage order from there, where the
    # fetched columns already are (on an ingest's storage order the times are never gathered through the walk's
    # permutation), and at the user / tool rows only
    prev = w.to_storage(w.positions_to_storage(w.prev_where(c["status"] >= 0)))  # storage positions, storage order
    # (status -2: a user / tool event, -3: another role between 'tool' and 'user', -1: another role; t_us: see
    # the query)
    code, t_us = w.stored("status"), w.stored("t_us")
    at = np.flatnonzero(code <= -2)  # tb_scan's rows: the user / tool events (and the rare -3, NULL)
    prev = prev[at]
    has = (prev >= 0) & (code[at] == -2)
    p = np.maximum(prev, 0)
    t_ok = t_us != np.iinfo(np.int64).min
    timed = has & t_ok[at] & t_ok[p]
    gap = (t_us[at] - t_us[p]) / 1e6  # (wraps where a time is missing: those rows are NULL, `timed`)
    status = np.where(has, code[p] + 1, 0).astype(np.int8)
    return {
        "tb_scan": {
            "rid": c["rid_storage"][at],
            "prev_seq": arrow.from_numpy(w.stored("seq")[p].astype(np.int32), mask=~has),
            "prev_status": arrow.from_numpy(status, mask=status == 0),
            "gap_raw_s": arrow.from_numpy(gap, mask=~timed),
        }
    }
