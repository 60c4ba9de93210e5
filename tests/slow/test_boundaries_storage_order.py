"""Turn boundaries on a table whose storage order is not session order (`-m slow`).

The first report of a 945-file Claude tree failed with 'tb_scan is not aligned with events': the scan's
output was paired by position (POSITIONAL JOIN) with a filtered scan of `events` (its user / tool rows), which
did not come back in the scan's row order there; turn_boundaries.sql now joins on rowid. Here the events span
several row groups (about 400,000 rows), are stored in hashed order (every session spread over the whole
table, so the scan takes its whole-table path), some rows are deleted (rowid gaps), DuckDB runs with four
threads, and the previous reply and gap of every user / tool row are checked against a window statement of
the rule itself (the last assistant event with a smaller seq in the same session; its end to this event's
start when both times are per_message).

This did not reproduce that failure: the POSITIONAL JOIN version (the parent of commit 5c8976e) passes it
too, as did plain DuckDB experiments with many small appends, large optimistic appends, deletes, a
checkpoint, updates and a many-chunk Arrow side. It holds the pairing on these storage orders, whatever
the join."""

from __future__ import annotations

import pytest

from stallscan.replay.boundaries import replay_boundaries

ROWS = 400_000  # > 3 row groups of 122,880 rows
PER = 37  # events per session (not a divisor of the row-group size)

GEN = f"""
INSERT INTO events (event_id, source_format, file, line, last_line, part, n_records, session_id, seq, ts, ts_end,
                    ts_quality, role, kind, text, n_tool_calls, finish_norm, is_sidechain)
SELECT 'e' || k, 'openai_chat', '/g/' || (k // {PER}), 1, 1, 0, 1, 's' || (k // {PER}), k % {PER} + 1,
       TIMESTAMPTZ '2026-01-01' + to_microseconds(k * 1000000 + h % 3000000),
       TIMESTAMPTZ '2026-01-01' + to_microseconds(k * 1000000 + h % 3000000 + (h // 7) % 2000000),
       CASE WHEN h % 11 = 0 THEN 'per_flush' ELSE 'per_message' END,
       role, CASE role WHEN 'tool' THEN 'tool_result' ELSE 'message' END, 'ok',
       CASE WHEN role = 'assistant' AND h % 3 = 0 THEN 1 ELSE 0 END,
       CASE WHEN role = 'assistant' THEN (CASE h % 5 WHEN 0 THEN 'length' ELSE 'stop' END) END, false
FROM (SELECT k, h, CASE WHEN k % {PER} = 0 OR h % 4 = 0 THEN 'user' WHEN h % 4 = 1 THEN 'tool'
                        ELSE 'assistant' END AS role
      FROM (SELECT i AS k, (hash(i * 31 + 7) % 1000000007)::BIGINT AS h FROM range({ROWS}) t(i)))
ORDER BY hash(k)
"""

# the rule, stated independently of the replay: a window over each session in seq order
EXPECTED = """
SELECT event_id, prev_event_id,
       CASE WHEN ts_quality = 'per_message' AND prev_quality = 'per_message'
            THEN round(epoch(ts - prev_end), 6) END AS gap
FROM (SELECT event_id, role, ts, ts_quality,
             last_value(CASE WHEN role = 'assistant' THEN event_id END IGNORE NULLS) OVER w AS prev_event_id,
             last_value(CASE WHEN role = 'assistant' THEN ts_end END IGNORE NULLS) OVER w AS prev_end,
             last_value(CASE WHEN role = 'assistant' THEN ts_quality END IGNORE NULLS) OVER w AS prev_quality
      FROM events
      WINDOW w AS (PARTITION BY session_id ORDER BY seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING))
WHERE role IN ('user', 'tool')
"""


@pytest.mark.slow
def test_turn_boundaries_pair_each_event_with_its_own_previous_reply(con):
    con.execute("SET threads = 4")
    con.execute(GEN)
    con.execute("DELETE FROM events WHERE hash(event_id) % 13 = 0")  # gaps in rowid
    ordered = con.execute(
        "SELECT count(*) FROM (SELECT session_id <> lag(session_id) OVER (ORDER BY rowid) AS new FROM events) WHERE new"
    ).fetchall()[0][0]
    assert ordered > ROWS // 2  # the storage order really spreads the sessions (not grouped)
    replay_boundaries(con, 2.0)
    got = "SELECT event_id, prev_event_id, round(gap_raw_s, 6) AS gap FROM turn_boundaries"
    n_want = con.execute(f"SELECT count(*) FROM ({EXPECTED})").fetchall()[0][0]
    assert con.execute("SELECT count(*) FROM turn_boundaries").fetchall()[0][0] == n_want > ROWS // 3
    assert con.execute(f"SELECT * FROM ({got}) EXCEPT ALL SELECT * FROM ({EXPECTED}) LIMIT 5").fetchall() == []
    assert con.execute(f"SELECT * FROM ({EXPECTED}) EXCEPT ALL SELECT * FROM ({got}) LIMIT 5").fetchall() == []
    statuses = dict(con.execute("SELECT prev_reply_status, count(*) FROM turn_boundaries GROUP BY ALL").fetchall())
    assert set(statuses) == {None, "final", "truncated", "tool_calls"}, statuses
