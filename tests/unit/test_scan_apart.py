"""scan_into after a grow (stallscan/replay/scan_apart.py): the sessions that come back after their walk are walked
apart and merged into the batched walk's parts; every output equals the whole table's walk row for row."""

from __future__ import annotations

from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pytest

from stallscan.replay import scan, scan_apart, scan_batches

BATCH = 8  # rows per rowid range of the batched scan


def _events(rows: list[tuple[str, int]]) -> duckdb.DuckDBPyConnection:
    """A database whose `events` holds these (session, seq) rows in this storage order (rowid = position); every
    third seq is a reply with seq % 4 tool calls."""
    con = duckdb.connect()
    con.register(
        "r",
        pa.table({"pos": list(range(len(rows))), "session_id": [s for s, _ in rows], "seq": [q for _, q in rows]}),
    )
    con.execute(
        "CREATE TABLE events AS SELECT session_id, seq::INTEGER AS seq, "
        "CASE WHEN seq % 3 = 0 THEN 'assistant' ELSE 'user' END AS role, (seq % 4)::INTEGER AS n_tool_calls, "
        "NULL::TIMESTAMPTZ AS ts, NULL::TIMESTAMPTZ AS ts_end, NULL AS model, NULL AS finish_reason FROM r ORDER BY pos"
    )
    con.unregister("r")
    return con


def _walked(n_sessions: int, length: int) -> list[tuple[str, int]]:
    """Sessions s0.. one after another, seq 1..length each (the generator's walk order)."""
    return [(f"s{i}", q) for i in range(n_sessions) for q in range(1, length + 1)]


def _step(w: scan.Walk) -> dict[str, Any]:
    """Three outputs: a running count of replies per row (out), the replies' rows (a side with rid), one row per
    session (a side of rows of its own)."""
    reply = w.cols["reply_info"] >= 0
    count = w.to_storage(w.seg_cumsum(reply))
    calls = w.to_storage(w.seg_cumsum(np.maximum(w.cols["reply_info"], 0) >> 2))
    at = np.flatnonzero(w.to_storage(reply))
    first = np.flatnonzero(w.starts)
    per = {
        "first_rid": w.cols["rid_storage"][first if w.perm is None else w.perm[first]],
        "rows": np.diff(np.append(first, w.n)),
    }
    return {"n": count, "calls": calls, "reply_rows": {"rid": w.cols["rid_storage"][at], "k": count[at]}, "per": per}


def _outputs(con: duckdb.DuckDBPyConnection) -> tuple[list[Any], list[Any], list[Any]]:
    return (
        con.execute("SELECT * FROM out").fetchall(),  # (storage order: read by position)
        con.execute("SELECT * FROM reply_rows").fetchall(),
        sorted(con.execute("SELECT * FROM per").fetchall()),
    )


def _whole(con: duckdb.DuckDBPyConnection) -> tuple[list[Any], list[Any], list[Any]]:
    """The outputs of one walk of the whole table (the fallback of old), and a plain walk per session."""
    w = scan.fetch(con, "scan_stall_ev", {"lo": 0, "hi": 1 << 40})
    cols = _step(w)
    rid = w.cols["rid_storage"].tolist()
    out = list(zip(rid, cols["n"].tolist(), cols["calls"].tolist(), strict=True))
    replies = list(zip(cols["reply_rows"]["rid"].tolist(), cols["reply_rows"]["k"].tolist(), strict=True))
    per = sorted(zip(cols["per"]["first_rid"].tolist(), cols["per"]["rows"].tolist(), strict=True))
    rows = con.execute("SELECT rowid, session_id, seq FROM events").fetchall()
    count: dict[int, int] = {}
    for sid in {r[1] for r in rows}:
        k = 0
        for r in sorted((r for r in rows if r[1] == sid), key=lambda r: r[2]):
            k += r[2] % 3 == 0
            count[r[0]] = k
    assert [(r[0], r[1]) for r in out] == [(r[0], count[r[0]]) for r in rows]  # the plain walk
    return out, replies, per


def _scan(con: duckdb.DuckDBPyConnection, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """scan_into in batches of BATCH rows; returns the sessions walked apart (the shares fallback made to fail)."""
    seen: list[str] = []
    gapped = scan_apart.gapped

    def spy(c: duckdb.DuckDBPyConnection, rows: int) -> tuple[list[str], int]:
        ids, n = gapped(c, rows)
        seen.extend(ids)
        return ids, n

    def no_shares(*_: Any, **__: Any) -> scan.Walk:
        raise AssertionError("the shares fallback ran")

    monkeypatch.setattr(scan_apart, "gapped", spy)
    real_fetch = scan.fetch
    monkeypatch.setattr(
        scan,
        "fetch",
        lambda c, n, p=None, where=None: no_shares() if where and "hash(" in where else real_fetch(c, n, p, where),
    )
    scan_batches.scan_into(con, "scan_stall_ev", "events", "out", _step, rows=BATCH, sides=("reply_rows", "per"))
    return seen


def _raises(con: duckdb.DuckDBPyConnection) -> None:
    end = con.execute("SELECT max(rowid) + 1 FROM events").fetchone()[0]
    with pytest.raises(scan_batches.Interleaved):
        list(scan_batches.batches(con, "scan_stall_ev", end, BATCH))


def test_one_grown_session(monkeypatch):
    rows = _walked(12, 5)
    rows.append(("s0", 6))  # a grown transcript's new line at the table's end
    con = _events(rows)
    _raises(con)
    assert _scan(con, monkeypatch) == ["s0"]
    assert _outputs(con) == _whole(con)


def test_several_grown_sessions(monkeypatch):
    rows = _walked(15, 6)
    rows += [("s2", 7), ("s9", 7), ("s2", 8), ("s5", 7), ("s5", 8), ("s5", 9)]
    con = _events(rows)
    _raises(con)
    assert sorted(_scan(con, monkeypatch)) == ["s2", "s5", "s9"]
    assert _outputs(con) == _whole(con)


def test_grown_rows_between_other_sessions(monkeypatch):
    """s1's new rows sit between other sessions' rows in the middle of the table, and one of its new rows
    comes before an older one in seq (out of order, as a second file of the session may be)."""
    rows = (
        _walked(6, 5)
        + [("s1", 7), ("s1", 6)]
        + [(f"t{i}", q) for i in range(4) for q in range(1, 6)]
        + _walked(8, 5)[30:]
    )
    rows.append(("s3", 6))
    con = _events(rows)
    _raises(con)
    assert sorted(_scan(con, monkeypatch)) == ["s1", "s3"]
    assert _outputs(con) == _whole(con)


def test_no_session_apart_after_all_falls_back_to_the_shares(monkeypatch):
    """When no session is found to walk apart (or they hold too many rows) the shares of old run: the same outputs."""
    rows = _walked(12, 5) + [("s4", 6)]
    con = _events(rows)
    _raises(con)
    monkeypatch.setattr(scan_apart, "gapped", lambda c, rows: ([], 0))
    scan_batches.scan_into(con, "scan_stall_ev", "events", "out", _step, rows=BATCH, sides=("reply_rows", "per"))
    assert _outputs(con) == _whole(con)
    monkeypatch.undo()
    con2 = _events(rows)
    monkeypatch.setattr(scan_apart, "APART_ROWS", 0)
    assert scan_apart.gapped(con2, 4) == (["s4"], 6)  # more rows than a batch of 4: the shares
    scan_batches.scan_into(con2, "scan_stall_ev", "events", "out", _step, rows=4, sides=("reply_rows", "per"))
    assert _outputs(con2) == _whole(con2)


def test_ungrown_table_has_no_gapped_session():
    con = _events(_walked(10, 7))
    assert scan_apart.gapped(con, BATCH) == ([], 0)


@pytest.mark.parametrize("seed", range(6))
def test_merge_equals_a_sort(seed):
    """`_merge` of two tables in rid order equals their rows sorted by rid (few and many insertion points)."""
    rng = np.random.default_rng(seed)
    rid = rng.permutation(400)[: int(rng.integers(1, 400))]
    x = rng.random(len(rid)) < rng.choice([0.02, 0.5])
    a, b = np.sort(rid[~x]), np.sort(rid[x])
    ta = pa.table({"rid": a, "v": a * 2})
    tb = pa.table({"rid": b, "v": b * 2})
    got = scan_apart._merge(ta, tb, b)
    assert got.column("rid").to_pylist() == sorted(rid.tolist())
    assert got.column("v").to_pylist() == [2 * r for r in sorted(rid.tolist())]


def test_a_session_of_the_last_range_walked_early_stops_the_batches_early():
    """batches(tail=...) raises Interleaved at the first walk that holds a session of the last range (the grown s0,
    walked first), where without it the batches run to the table's end; a table without the grow runs through."""
    con = _events([*_walked(12, 5), ("s0", 6)])
    end = con.execute("SELECT max(rowid) + 1 FROM events").fetchone()[0]
    tail = scan_apart.tail(con, (end - 1) // BATCH * BATCH)
    assert sorted(tail.to_pylist()) == ["s0", "s11"]

    def walks(t: pa.Array | None) -> int:
        n = 0
        with pytest.raises(scan_batches.Interleaved):
            for _ in scan_batches.batches(con, "scan_stall_ev", end, BATCH, tail=t):
                n += 1
        return n

    assert walks(tail) == 0 < walks(None)
    plain = _events(_walked(12, 5))
    last = (60 - 1) // BATCH * BATCH
    got = list(scan_batches.batches(plain, "scan_stall_ev", 60, BATCH, tail=scan_apart.tail(plain, last)))
    assert sum(w.n for w in got) == 60
