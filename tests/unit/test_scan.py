"""The segmented scans of stallscan/replay/scan.py against plain loops over each session, on tables in every
storage order: grouped and ascending (no sort), sessions interleaved, seq out of order, rowids with gaps."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from stallscan.replay.scan import Walk, seg_start, walk_of


def _table(rng: np.random.Generator, n: int, n_sessions: int, order: str) -> pa.Table:
    sess = np.sort(rng.integers(0, n_sessions, n))
    seq = np.zeros(n, dtype=np.int64)
    for s in np.unique(sess):  # (test data: seq 1.. inside each session, in the session's rows)
        idx = np.flatnonzero(sess == s)
        seq[idx] = np.arange(1, len(idx) + 1) * 3  # gaps in seq, as after a removed line
    if order == "shuffled":
        p = rng.permutation(n)
        sess, seq = sess[p], seq[p]
    rid = np.cumsum(rng.integers(1, 4, n))  # ascending, with gaps (deleted rows)
    return pa.table(
        {
            "rid": rid,
            "session_id": pa.array([f"s{x}" for x in sess]),
            "seq": seq,
            "flag": rng.random(n) < 0.4,
            "val": rng.integers(0, 5, n),
            "event_id": pa.array([f"e{r}" for r in rid]),
        }
    )


def _by_session(t: pa.Table) -> dict[str, list[int]]:
    """Row numbers (storage order) of each session, in seq order: the plain walk."""
    d = t.to_pydict()
    out: dict[str, list[int]] = {}
    for i in sorted(range(t.num_rows), key=lambda i: (d["session_id"][i], d["seq"][i])):
        out.setdefault(d["session_id"][i], []).append(i)
    return out


@pytest.mark.parametrize("order", ["grouped", "shuffled"])
@pytest.mark.parametrize("seed", range(6))
def test_segmented_scans_equal_a_walk_per_session(order, seed):
    rng = np.random.default_rng(seed)
    t = _table(rng, int(rng.integers(0, 300)), int(rng.integers(1, 12)), order)
    d = t.to_pydict()
    want_sum = [0] * t.num_rows
    want_prev: list[str | None] = [None] * t.num_rows
    for rows in _by_session(t).values():
        total, last = 0, None
        for i in rows:
            total += d["val"][i]
            want_sum[i] = total
            want_prev[i] = last
            if d["flag"][i]:
                last = d["event_id"][i]
    w = walk_of(t)
    if order == "grouped":
        assert w.perm is None  # storage order already is the walk order: no sort
    assert w.to_storage(w.seg_cumsum(w.cols["val"])).tolist() == want_sum
    prev = w.to_storage(w.positions_to_storage(w.prev_where(w.cols["flag"])))
    assert w.take_storage("event_id", prev).to_pylist() == want_prev
    assert w.cols["rid_storage"].tolist() == d["rid"]


@pytest.mark.parametrize("seed", range(4))
def test_seg_start_and_prev_where_equal_a_loop(seed):
    """seg_start (segments begin where starts holds; rows before the first start begin at 0) and prev_where
    (no flagged row at all included) against a plain loop, on short random flags."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(0, 30))
        starts, flags = rng.random(n) < rng.random(), rng.random(n) < rng.random()
        want_start, want_prev, first, last = [], [], 0, -1
        for i in range(n):
            if starts[i]:
                first, last = i, -1
            want_start.append(first)
            want_prev.append(last)
            if flags[i]:
                last = i
        assert seg_start(starts).tolist() == want_start
        if n and starts[0]:  # (a walk's first row always starts a session)
            assert Walk({}, {}, starts, None, n).prev_where(flags).tolist() == want_prev


def test_rows_out_of_rowid_order_are_put_back():
    rng = np.random.default_rng(7)
    t = _table(rng, 50, 4, "grouped")
    back = walk_of(t.take(pa.array(rng.permutation(50))))
    assert back.cols["rid_storage"].tolist() == t.column("rid").to_pylist()
    assert back.to_storage(back.seg_cumsum(back.cols["val"])).tolist() == (
        walk_of(t).to_storage(walk_of(t).seg_cumsum(walk_of(t).cols["val"])).tolist()
    )


@pytest.mark.parametrize("order", ["grouped", "shuffled"])
@pytest.mark.parametrize("batch", [1, 2, 7, 1000])
def test_batched_scan_into_equals_a_walk_per_session(order, batch):
    """scan_into over rowid ranges of `batch` rows (sessions cut across ranges, deleted rows leaving gaps in
    rowid): one output row per table row in storage order, each the running count a plain walk gives;
    shuffled tables take the whole-table path."""
    import duckdb

    from stallscan.replay import scan, scan_batches

    rng = np.random.default_rng(batch)
    con = duckdb.connect()
    con.register("t", _table(rng, 200, 9, order))
    con.execute(
        "CREATE TABLE events AS SELECT session_id, seq::INTEGER AS seq, "
        "CASE WHEN flag THEN 'assistant' ELSE 'user' END AS role, val::INTEGER AS n_tool_calls, "
        "NULL::TIMESTAMPTZ AS ts, NULL::TIMESTAMPTZ AS ts_end, NULL AS model, NULL AS finish_reason FROM t"
    )
    con.execute("DELETE FROM events WHERE seq % 7 = 0")  # gaps in rowid
    kept = con.execute("SELECT rowid, session_id, seq, role = 'assistant' FROM events").fetchall()
    want = {}
    for sid in {r[1] for r in kept}:
        total = 0
        for rid, _, _, reply in sorted((r for r in kept if r[1] == sid), key=lambda r: r[2]):
            total += reply
            want[rid] = total

    def step(w: scan.Walk) -> dict[str, object]:
        reply = w.cols["reply_info"] >= 0  # (scan_stall_ev.sql: -1 on an event that is no reply)
        replies = w.to_storage(w.seg_cumsum(reply))
        at = np.flatnonzero(w.to_storage(reply))  # a table of the replies' rows only (`sides`)
        return {"replies": replies, "reply_rows": {"rid": w.cols["rid_storage"][at], "n": replies[at]}}

    scan_batches.scan_into(con, "scan_stall_ev", "events", "out", step, rows=batch, sides=("reply_rows",))
    only = con.execute("SELECT rid, n FROM reply_rows").fetchall()  # the replies' rows, in storage order
    assert only == [(r[0], want[r[0]]) for r in kept if r[3]]
    got = con.execute("SELECT rid, replies FROM out").fetchall()
    assert [r[0] for r in got] == [r[0] for r in kept]  # storage order, one row each
    assert dict(got) == want


@pytest.mark.parametrize("order", ["grouped", "shuffled"])
@pytest.mark.parametrize("seed", range(4))
def test_carried_runs_equal_the_runs_of_the_whole(order, seed):
    """What `batches` carries: the runs of consecutive pieces of a table, put side by side by `_merge`, are the
    runs of the whole table; and the walk built from them is the walk `walk_of` builds comparing the ids itself."""
    from stallscan.replay import scan, scan_batches

    rng = np.random.default_rng(seed)
    t = _table(rng, 120, 7, order)
    cuts = np.sort(rng.choice(np.arange(1, 120), size=5, replace=False)).tolist()
    heads, lengths = scan_batches._runs(t.slice(0, 0))
    for lo, hi in zip([0, *cuts], [*cuts, 120], strict=True):
        h, n = scan_batches._runs(t.slice(lo, hi - lo))
        heads, lengths = scan_batches._merge(pa.concat_arrays([heads, h]), np.concatenate((lengths, n)))
    whole = scan_batches._runs(t)
    assert heads.to_pylist() == whole[0].to_pylist() and lengths.tolist() == whole[1].tolist()
    a, b = scan.walk_runs(t, (heads, lengths)), walk_of(t)
    assert a.starts.tolist() == b.starts.tolist() and a.n == b.n
    assert (a.perm is None) == (b.perm is None) and (a.perm is None or a.perm.tolist() == b.perm.tolist())
    assert {k: v.tolist() for k, v in a.cols.items()} == {k: v.tolist() for k, v in b.cols.items()}
