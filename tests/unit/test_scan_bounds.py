"""The turn boundaries' previous-reply scan in batches of whole sessions (stallscan/replay/scan_bounds.py, over
stallscan/replay/scan.py's rowid ranges)
against a plain walk per session, for every batch size: sessions cut across batches, a session longer than
a batch, and storage orders the batches cannot use (sessions interleaved), where the scan must fall back to
the whole table and still give the same rows."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from itertools import pairwise
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from stallscan.replay import scan_batches, scan_bounds
from stallscan.store import sql
from stallscan.store.db import connect

T0 = datetime(2026, 1, 1, tzinfo=UTC)
COLUMNS = (
    "event_id, source_format, file, line, last_line, part, n_records, session_id, seq, ts, ts_end, ts_quality, "
    "role, kind, text, n_tool_calls, finish_norm, is_sidechain"
)


@pytest.fixture(scope="module")
def shared():
    c = connect(":memory:")
    yield c
    c.close()


@pytest.fixture
def con(shared):
    """One connection for the module (a stallscan connect costs more than most cases here), with a new empty
    `events` table for each test: dropped, then made by the schema file as connect() makes it."""
    shared.execute("DROP TABLE events")
    sql.run(shared, "store/schema")
    return shared


def _sessions(seed: int) -> list[list[dict[str, object]]]:
    rng = np.random.default_rng(seed)
    out = []
    for s in range(int(rng.integers(1, 6))):
        rows = []
        for i in range(int(rng.integers(1, 14))):
            role = str(rng.choice(["user", "assistant", "assistant", "tool", "system", "unknown"]))
            reply = role == "assistant"
            rows.append(
                {
                    "event_id": f"s{s}-{i}",
                    "session_id": f"s{s}",
                    "seq": (i + 1) * 2,
                    "role": role,
                    "ms": None if rng.random() < 0.1 else int(rng.integers(0, 5000)) + 1000 * i,
                    "dur": int(rng.integers(0, 3000)) if reply else 0,
                    "ts_quality": "per_message" if rng.random() < 0.85 else "per_flush",
                    "finish": str(rng.choice(["stop", "length", "tool_calls"])) if reply else None,
                }
            )
        out.append(rows)
    return out


def _insert(con, rows):
    """The rows in one bulk insert (an Arrow table; executemany runs one statement a row)."""
    vals = []
    for e in rows:
        ts = T0 + timedelta(milliseconds=e["ms"]) if e["ms"] is not None else None
        end = ts + timedelta(milliseconds=e["dur"]) if ts is not None else None
        calls = 1 if e["finish"] == "tool_calls" else 0
        vals.append(
            (e["event_id"], "openai_chat", "/t", 1, 1, 0, 1, e["session_id"], e["seq"], ts, end, e["ts_quality"],
             e["role"], "message", "ok", calls, e["finish"], False)
        )  # fmt: skip
    names = [c.strip() for c in COLUMNS.split(",")]
    batch = pa.table({n: list(col) for n, col in zip(names, zip(*vals))})  # noqa: F841 (read by the SQL below)
    con.execute(f"INSERT INTO events ({COLUMNS}) SELECT * FROM batch")


def _expected(rows):
    """(event_id, previous reply's id, its status, gap in s) of each user / tool row, in storage order: a walk."""
    status = {"length": "truncated", "tool_calls": "tool_calls", "stop": "final"}
    out = []
    for e in rows:
        if e["role"] not in ("user", "tool"):
            continue
        before = [r for r in rows if r["session_id"] == e["session_id"] and r["seq"] < e["seq"]]
        replies = sorted((r for r in before if r["role"] == "assistant"), key=lambda r: r["seq"])
        p = replies[-1] if replies else None
        gap = None
        if p and e["ms"] is not None and p["ms"] is not None and "per_flush" not in (e["ts_quality"], p["ts_quality"]):
            gap = (e["ms"] - (p["ms"] + p["dur"])) / 1000
        out.append((e["event_id"], p and p["event_id"], p and status[p["finish"]], gap))
    return out


def _got(con):
    """tb_scan (one row per event whose role lies between 'tool' and 'user', in storage order) as (event_id,
    previous reply's id (from its seq), its status, gap) of each user / tool row."""
    rows = con.execute("SELECT rid, prev_seq, prev_status, gap_raw_s FROM tb_scan").fetchall()
    events = con.execute(
        "SELECT rowid, event_id, role, session_id FROM events WHERE role >= 'tool' AND role <= 'user' ORDER BY rowid"
    ).fetchall()
    assert [r[0] for r in rows] == [e[0] for e in events]  # every such event, in storage order
    # (the previous reply is stored as its seq in the session: its id is the assistant event's at that seq)
    reply = {
        (sid, seq): eid
        for sid, seq, eid in con.execute(
            "SELECT session_id, seq, event_id FROM events WHERE role = 'assistant'"
        ).fetchall()
    }
    out = []
    for (_, q, s, g), (_, eid, role, sid) in zip(rows, events, strict=True):
        p = None if q is None else reply[(sid, q)]
        if role in ("user", "tool"):
            out.append((eid, p, None if s is None else scan_bounds.STATUSES[s - 1], None if g is None else round(g, 6)))
        else:  # (another role in that range: no previous reply)
            assert (p, s, g) == (None, None, None)
    return out


@pytest.mark.parametrize("batch", [1, 2, 3, 7, 1 << 20])
@pytest.mark.parametrize("order", ["grouped", "interleaved"])
@pytest.mark.parametrize("seed", range(4))
def test_batched_scan_equals_a_walk(con, monkeypatch, seed, order, batch):
    sessions = _sessions(seed)
    if order == "grouped":
        rows = [e for s in sessions for e in s]
    else:  # round robin over the sessions: each one's rows spread over the whole table
        rows = [s[i] for i in range(max(map(len, sessions))) for s in sessions if i < len(s)]
    _insert(con, rows)
    monkeypatch.setattr(scan_bounds, "BATCH_ROWS", batch)
    want = _want(rows)
    scan_bounds.prev_replies(con)
    assert _got(con) == want


def test_a_session_met_again_stops_the_batches(con, monkeypatch):
    """Storage order a a | b b | a a with 2-row batches: session a is scanned when the second batch shows it
    does not go on, then comes back; the batching must give up (the caller then scans the whole table).
    Stored a a | a b | b b, it goes through, a carried into the second batch."""
    rows = [
        {"event_id": f"{s}{i}", "session_id": s, "seq": i, "role": "user" if i % 2 else "assistant", "ms": i * 1000,
         "dur": 0, "ts_quality": "per_message", "finish": None if i % 2 else "stop"}
        for s, i in (("a", 1), ("a", 2), ("b", 1), ("b", 2), ("a", 3), ("a", 4))
    ]  # fmt: skip
    _batching_gives_up(con, monkeypatch, rows)
    con.execute("DELETE FROM events")
    rows = sorted(rows, key=lambda e: (e["session_id"], e["seq"]))
    _insert(con, rows)
    end = con.execute("SELECT max(rowid) + 1 FROM events").fetchall()[0][0]
    assert [w.n for w in scan_batches.batches(con, "scan_boundaries", end, 2)] == [
        4,
        2,
    ]  # (a carried into the second range)
    want = _want(rows)
    scan_bounds.prev_replies(con)
    assert _got(con) == want


def _batching_gives_up(con, monkeypatch, rows) -> None:
    """Stored in this order, 2-row batches raise Interleaved; prev_replies then scans the whole table and
    gives the reference walk's rows."""
    _insert(con, rows)
    monkeypatch.setattr(scan_bounds, "BATCH_ROWS", 2)
    with pytest.raises(scan_batches.Interleaved):
        list(scan_batches.batches(con, "scan_boundaries", len(rows), 2))
    scan_bounds.prev_replies(con)
    assert _got(con) == _want(rows)  # (the whole-table scan)


def _want(rows: Sequence[Mapping[str, object]]) -> list[tuple[object, ...]]:
    """The reference walk's rows, gaps rounded as _got rounds them."""
    return [(a, b, c, None if g is None else round(g, 6)) for a, b, c, g in _expected(rows)]


def _ev(s: str, i: int) -> dict[str, object]:
    """A user (odd seq) or assistant (even seq) event of session s, a second apart."""
    return {
        "event_id": f"{s}{i}",
        "session_id": s,
        "seq": i,
        "role": "user" if i % 2 else "assistant",
        "ms": i * 1000,
        "dur": 0,
        "ts_quality": "per_message",
        "finish": None if i % 2 else "stop",
    }


def _walks(con, monkeypatch, rows: Sequence[Mapping[str, object]], size: int) -> list[list[int]]:
    """Store `rows` in this order and return the rowids of each walk of `batches` in ranges of `size` rows,
    checking what every walk must be: whole sessions (no session in two walks), in rising rowid order (each
    walk's rows all below the next walk's); and that prev_replies in such batches gives the reference walk's
    rows."""
    _insert(con, rows)
    end = con.execute("SELECT max(rowid) + 1 FROM events").fetchall()[0][0]
    walks = [sorted(w.cols["rid_storage"].tolist()) for w in scan_batches.batches(con, "scan_boundaries", end, size)]
    assert sorted(r for w in walks for r in w) == list(range(end))
    assert all(a[-1] < b[0] for a, b in pairwise(walks))
    owner = {r: str(rows[r]["session_id"]) for r in range(end)}
    sessions = [{owner[r] for r in w} for w in walks]
    assert all(not (x & y) for i, x in enumerate(sessions) for y in sessions[i + 1 :])
    monkeypatch.setattr(scan_bounds, "BATCH_ROWS", size)
    scan_bounds.prev_replies(con)
    assert _got(con) == _want(rows)
    return walks


def test_a_carried_session_before_a_finished_one(con, monkeypatch):
    """Storage order a b | a c | c with 2-row ranges: after the first range both a and b are carried (a goes
    on, and b's row lies after a's); after the second, a and b are complete and c goes on: the rows are cut
    before c, so a and b are walked together (a's two runs sorted there) and c after them."""
    rows = [_ev("a", 1), _ev("b", 1), _ev("a", 2), _ev("c", 1), _ev("c", 2)]
    assert _walks(con, monkeypatch, rows, 2) == [[0, 1, 2], [3, 4]]


def test_a_session_in_three_runs_inside_an_ingest_batch(con, monkeypatch):
    """As an ingest batch stores a Claude session: its user rows, then another session's, then its assistant
    rows in two runs (a a b b a a), the next ingest batch's session c after them; 4-row ranges cut a. At the
    first range's end a goes on and b lies among a's runs: nothing is walked; at the second's, c goes on:
    the rows are cut before c, a (three runs) and b walked together."""
    rows = [_ev("a", 1), _ev("a", 2), _ev("b", 1), _ev("b", 2), _ev("a", 3), _ev("a", 4), _ev("c", 1), _ev("c", 2)]
    rows.append(_ev("c", 3))
    assert _walks(con, monkeypatch, rows, 4) == [[0, 1, 2, 3, 4, 5], [6, 7, 8]]


def test_a_session_going_on_among_complete_ones(con, monkeypatch):
    """Stored x a y a | a z z with 4-row ranges: a goes on across the range end, x lies before it and y among
    its rows: x is walked at the first range's end, y is carried with a (both complete only then), and
    walked with a and z at the end."""
    rows = [_ev("x", 1), _ev("a", 1), _ev("y", 1), _ev("a", 2), _ev("a", 3), _ev("z", 1), _ev("z", 2)]
    assert _walks(con, monkeypatch, rows, 4) == [[0], [1, 2, 3, 4, 5, 6]]


def test_a_session_back_after_its_walk(con, monkeypatch):
    """Stored a b | a b | c c | a (a grown session appended later) with 2-row ranges: a and b are walked at
    the second range's end (a in two runs), c at the third's, then a comes back in the fourth range: the
    batching gives up (and the scan falls back to the whole table)."""
    rows = [_ev("a", 1), _ev("b", 1), _ev("a", 2), _ev("b", 2), _ev("c", 1), _ev("c", 2), _ev("a", 3)]
    _insert(con, rows)
    walks = scan_batches.batches(con, "scan_boundaries", len(rows), 2)
    assert sorted(next(walks).cols["rid_storage"].tolist()) == [0, 1, 2, 3]
    assert sorted(next(walks).cols["rid_storage"].tolist()) == [4, 5]
    with pytest.raises(scan_batches.Interleaved):
        next(walks)
    monkeypatch.setattr(scan_bounds, "BATCH_ROWS", 2)
    scan_bounds.prev_replies(con)
    assert _got(con) == _want(rows)  # (the whole-table scan)


def test_sessions_interleaved_inside_the_carried_rows(con, monkeypatch):
    """Stored a b | a b with 2-row batches: both sessions go on into the second range, so both are carried to
    the end and walked together (one walk of all four rows, sorted there), not cut apart."""
    rows = [_ev("a", 1), _ev("b", 1), _ev("a", 2), _ev("b", 2)]
    _insert(con, rows)
    monkeypatch.setattr(scan_bounds, "BATCH_ROWS", 2)
    end = con.execute("SELECT max(rowid) + 1 FROM events").fetchall()[0][0]
    assert [w.n for w in scan_batches.batches(con, "scan_boundaries", end, 2)] == [4]
    want = _want(rows)
    scan_bounds.prev_replies(con)
    assert _got(con) == want


def test_reply_status_cases(con):
    """scan_boundaries.sql's completion report of a reply, on texts around each anchored pattern: leading
    whitespace (RE2's \\s is [\\t\\n\\f\\r ]: a vertical tab or a no-break space is not), the pattern later in
    the text, a text that only starts like it. Cases: tests/unit/cases/reply_status.json, each
    [text, finish_norm, n_tool_calls, status] with the status read from the rule (stallscan/replay/boundaries.py)."""
    cases = json.loads((Path(__file__).parent / "cases" / "reply_status.json").read_text(encoding="utf-8"))
    con.executemany(
        f"INSERT INTO events ({COLUMNS}) VALUES (?, 'openai_chat', 'f', 1, 1, 0, 1, 's', ?, ?, ?, 'per_message', "
        "'assistant', 'message', ?, ?, ?, false)",
        [[f"r{i}", i + 1, T0, T0, text, n, finish] for i, (text, finish, n, _) in enumerate(cases)],
    )
    query = sql.load("replay/scan_boundaries")[0]
    got = con.execute(f"SELECT seq, status FROM ({query}) ORDER BY seq", {"lo": 0, "hi": 1 << 40}).fetchall()
    assert [(repr(c[0]), scan_bounds.STATUSES[s]) for c, (_, s) in zip(cases, got)] == [
        (repr(c[0]), c[3]) for c in cases
    ]
