"""The walk order of stallscan/replay/scan.py (`_walk`'s sort of a batch whose sessions are not grouped, as an
ingest lays them out) against a plain sort: rows by (session in order of first appearance, seq, storage
position), on hand-made layouts and at the edges of the one-key sort (seq at INTEGER's ends, negative seq, seq
too wide for the key, ties in seq)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from stallscan.replay import scan, scan_batches
from stallscan.replay.scan import walk_of


def _order_by_loop(sess: list[str], seq: list[int]) -> list[int]:
    """Storage positions in walk order: the plain walk (sessions in order of first appearance, each by seq, ties
    in storage order)."""
    first: dict[str, int] = {}
    for s in sess:
        first.setdefault(s, len(first))
    return sorted(range(len(sess)), key=lambda i: (first[sess[i]], seq[i], i))


def _walk_order(w: scan.Walk) -> list[int]:
    return list(range(w.n)) if w.perm is None else [int(p) for p in w.perm]


def _table(sess: list[str], seq: np.ndarray) -> pa.Table:
    n = len(sess)
    return pa.table({"rid": np.arange(n, dtype=np.int64) * 2, "session_id": pa.array(sess, pa.string()), "seq": seq})


def _ingest_like(rng: np.random.Generator, n_sessions: int, per_batch: int) -> tuple[list[str], list[int], int]:
    """Sessions of 1-40 rows, in ingest batches of `per_batch` sessions: each batch's user rows of every session
    first, then its other rows in two halves, the sessions in a shuffled order in each part (layout18). Also the
    rows of the largest ingest batch."""
    sess: list[str] = []
    seq: list[int] = []
    names = [f"s{i:03d}" for i in range(n_sessions)]
    largest = 0
    for b in range(0, n_sessions, per_batch):
        group = names[b : b + per_batch]
        rows = {s: list(range(int(rng.integers(1, 41)))) for s in group}
        largest = max(largest, sum(map(len, rows.values())))
        user = {s: [q for q in r if q % 3 == 0] for s, r in rows.items()}
        rest = {s: [q for q in r if q % 3] for s, r in rows.items()}
        halves = [{s: r[: len(r) // 2] for s, r in rest.items()}, {s: r[len(r) // 2 :] for s, r in rest.items()}]
        for part in (user, *halves):
            for s in rng.permutation(group):
                sess += [str(s)] * len(part[s])
                seq += part[s]
    return sess, seq, largest


@pytest.mark.parametrize("seed", range(8))
def test_ingest_layout_walks_in_session_then_seq_order(seed):
    rng = np.random.default_rng(seed)
    sess, seq, _ = _ingest_like(rng, int(rng.integers(1, 30)), int(rng.integers(1, 8)))
    for dtype in (np.int32, np.int64):
        w = walk_of(_table(sess, np.array(seq, dtype=dtype)))
        assert _walk_order(w) == _order_by_loop(sess, seq)
        assert w.cols["seq"].tolist() == [seq[i] for i in _order_by_loop(sess, seq)]
        walked = [sess[i] for i in _walk_order(w)]
        assert w.starts.tolist() == [i == 0 or walked[i] != walked[i - 1] for i in range(w.n)]


@pytest.mark.parametrize(
    "seq",
    [
        [2**31 - 1, -(2**31), 0, 5, -(2**31), 2**31 - 1, 7, 7],  # INTEGER's ends in one batch: a range of 2^32 - 1
        [-5, -9, -1, -9, 3, -2, 0, 0],  # negative seq, ties
        [2**40, -(2**40), 3, 1, 2**62, -(2**62), 0, 9],  # too wide for the key: np.lexsort
    ],
)
def test_walk_order_at_the_keys_edges(seq):
    sess = ["b", "a", "b", "c", "a", "b", "c", "a"]
    dtype = np.int32 if max(abs(x) for x in seq) < 2**31 else np.int64
    w = walk_of(_table(sess, np.array(seq, dtype=dtype)))
    assert _walk_order(w) == _order_by_loop(sess, seq)
    assert w.starts.tolist() == [True, False, False, True, False, False, True, False]


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("scale", [1, 2, 1000])
def test_batched_walks_of_an_ingest_layout_equal_a_plain_sort(seed, scale, monkeypatch):
    """`batches` over an ingest-like layout, by rowid ranges of `scale` times an ingest batch's rows (smaller ones
    may find a session after its walk: Interleaved, tests/unit/test_scan_bounds.py): each walk's rows are whole
    sessions in the plain walk order."""
    import duckdb

    from stallscan.store import sql

    rng = np.random.default_rng(100 + seed)
    sess, seq, largest = _ingest_like(rng, int(rng.integers(1, 40)), int(rng.integers(1, 6)))
    rows = scale * largest
    con = duckdb.connect()
    t = _table(sess, np.array(seq, dtype=np.int32))
    con.register("t", t)

    def relation(con, name, params=None):  # (the fetch of one rowid range of the table above)
        return con.sql("SELECT * FROM t WHERE rid // 2 >= $lo AND rid // 2 < $hi", params=params)

    monkeypatch.setattr(sql, "relation", relation)
    walks = list(scan_batches.batches(con, "t", len(sess), rows))
    seen = 0
    walked: set[str] = set()
    for w in walks:
        part = slice(seen, seen + w.n)
        assert w.cols["rid_storage"].tolist() == t.column("rid").to_pylist()[part]
        order = [seen + i for i in _walk_order(w)]
        assert order == [seen + i for i in _order_by_loop(sess[part], seq[part])]
        assert walked.isdisjoint(sess[part])  # (whole sessions: none in two walks)
        walked |= set(sess[part])
        seen += w.n
    assert seen == len(sess)


@pytest.mark.parametrize("seed", range(3))
def test_ties_in_seq_keep_their_storage_order(seed):
    """Rows of one session with the same seq (a duplicated line) walk in storage order, as the plain sort has them
    (enough rows that an unstable sort would mix them)."""
    rng = np.random.default_rng(seed)
    n = 3_000
    sess = [f"s{x}" for x in rng.integers(0, 3, n)]
    seq = rng.integers(0, 10, n).tolist()
    w = walk_of(_table(sess, np.array(seq, dtype=np.int32)))
    assert _walk_order(w) == _order_by_loop(sess, seq)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("layout", ["ingest", "grouped"])
def test_columns_read_at_positions_and_in_storage_order(seed, layout):
    """A walk's numeric columns as the scans read them (scan.Cols: gathered through the permutation only when
    read): `at` (a few walk positions, the column not gathered whole), `stored` (the fetched order) and the
    whole column, read in any order, against the plain walk order; rid_storage stays in storage order, and `at`
    gives the rowids of the rows at those walk positions."""
    rng = np.random.default_rng(seed)
    sess, seq, _ = _ingest_like(rng, int(rng.integers(1, 30)), int(rng.integers(1, 8)))
    if layout == "grouped":
        order = _order_by_loop(sess, seq)
        sess, seq = [sess[i] for i in order], [seq[i] for i in order]
    t = _table(sess, np.array(seq, dtype=np.int32)).append_column("val", pa.array(rng.integers(-9, 9, len(sess))))
    walk = _order_by_loop(sess, seq)
    rid, val = t.column("rid").to_pylist(), t.column("val").to_pylist()
    pos = rng.integers(0, len(sess), 20)
    for first in ("at", "whole"):  # (`at` before and after the column was gathered whole)
        w = walk_of(t)
        assert (w.perm is None) == (layout == "grouped")
        for step in (first, "whole" if first == "at" else "at"):
            if step == "at":
                assert w.at("val", pos).tolist() == [val[walk[p]] for p in pos]
                assert w.at("seq", pos).tolist() == [seq[walk[p]] for p in pos]
                assert w.at("rid_storage", pos).tolist() == [rid[walk[p]] for p in pos]
            else:
                assert w.cols["val"].tolist() == [val[i] for i in walk]
        assert w.stored("val").tolist() == val
        assert w.cols["rid_storage"].tolist() == rid
        assert w.cols["rid"].tolist() == [rid[i] for i in walk]  # (the fetched rid column: in walk order)
        assert sorted(w.cols) == ["rid", "rid_storage", "seq", "val"] and len(w.cols) == 4
    plain = scan.Walk({"val": np.array([val[i] for i in walk])}, {}, w.starts, w.perm, w.n)  # (a plain dict)
    assert plain.stored("val").tolist() == val and plain.at("val", pos).tolist() == [val[walk[p]] for p in pos]
