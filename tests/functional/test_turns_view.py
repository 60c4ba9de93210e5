"""`turns` is a view over `turns_by_seq`, a view over the stored table turns_core
(queries/replay/stall_turns.sql, stall_turns_by_seq_view.sql, stall_turns_view.sql): turns_core stores the turn's
start and delivered reply as their seq in the session, not their event ids.

* turns_by_seq has the columns of `turns` with delivered_seq in delivered_event_id's place and no start_event_id
  (start_seq is there), and reads no events;
* the view's start_event_id is the event at start_seq (turns 1 on; NULL for turn 0), its delivered_event_id the
  assistant event at delivered_seq (NULL: no reply); the reference walk's ids are held equal by
  tests/functional/test_rounds_codes.py (stallscan.replay.stalls_agreement).
"""

from __future__ import annotations

import re

import pytest

from stallscan.replay.stalls import replay_stalls
from tests.helpers import relation_kinds


@pytest.fixture
def db(sample_ingested_db):
    return sample_ingested_db  # (sample_logs ingested, not replayed: tests/functional/conftest.py)


def test_the_turns_start_and_delivered_reply_are_stored_as_their_seq(db):
    replay_stalls(db)
    assert relation_kinds(db, "turns") == {"view"}
    assert relation_kinds(db, "turns_by_seq") == {"view"}
    assert relation_kinds(db, "turns_core") == {"table"}
    cols = [r[:2] for r in db.execute("DESCRIBE turns").fetchall()]
    assert ("start_event_id", "VARCHAR") in cols and ("delivered_event_id", "VARCHAR") in cols
    assert [r[:2] for r in db.execute("DESCRIBE turns_by_seq").fetchall()] == [
        ("delivered_seq", "INTEGER") if c == "delivered_event_id" else (c, t) for c, t in cols if c != "start_event_id"
    ]
    starts, delivered, bad, n = db.execute(
        "SELECT count(t.start_event_id), count(t.delivered_event_id), "
        "count(*) FILTER (WHERE t.start_event_id IS DISTINCT FROM CASE WHEN t.turn_id > 0 THEN s.event_id END "
        "OR t.delivered_event_id IS DISTINCT FROM d.event_id OR d.role <> 'assistant' "
        "OR (t.turn_id > 0 AND s.event_id IS NULL) OR (t.n_rounds > 0) <> (d.event_id IS NOT NULL)), count(*) "
        "FROM turns t JOIN turns_by_seq b USING (session_id, turn_id) "
        "LEFT JOIN events s ON s.session_id = b.session_id AND s.seq = b.start_seq "
        "LEFT JOIN events d ON d.session_id = b.session_id AND d.seq = b.delivered_seq"
    ).fetchone()
    assert bad == 0 and starts > 0 and delivered > 0
    assert n == db.execute("SELECT count(*) FROM turns_core").fetchone()[0]  # (one row per turn: seq is unique)
    plan = db.execute("EXPLAIN SELECT * FROM turns_by_seq").fetchall()[0][1]
    assert "events" not in plan and "JOIN" not in plan.upper()


def test_the_readers_of_turns_that_read_no_id_read_turns_by_seq():
    """The report's and the stall listings' queries that read the turns read turns_by_seq (no join with events)."""
    from stallscan.store.sql import queries_dir

    readers = ("report/cells_turns", "report/sessions_list", "replay/stall_list", "replay/stall_counts",
               "replay/stall_rates")  # fmt: skip
    for name in readers:
        text = (queries_dir() / f"{name}.sql").read_text()
        assert re.search(r"\b(FROM|JOIN) turns_by_seq\b", text), name
        assert not re.search(r"\b(FROM|JOIN) turns\b(?!_)", text), name
