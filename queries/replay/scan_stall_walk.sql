-- Stall replay, step 4a: the narrow columns of the rounds the bounded re-prompt walk reads: every round of a
-- turn that holds a stall (no other turn is walked), one share of the sessions at a time (part $part of
-- $parts, by a hash of the session id, so a session is never cut; stallscan/replay/stall_scans.py runs the walk as
-- segmented scans over turns and episodes). Input: rounds_core, rounds_nudges.
-- kind: 0 tool_round, 1 final (the breakers), 2 dropped_tool_call, 3 no_tool (the dropped family),
-- 4 narrated_intent, 5 any other round. Any order (the scan orders the rows by session and seq).
SELECT r.rowid AS rid, r.session_id, r.seq, r.turn_id::BIGINT AS turn_id,
       -- (the round kind's code, queries/replay/stall_rounds.sql: 1 tool_round ... 5 narrated_intent, one above kind)
       CASE WHEN r.codes & 255 BETWEEN 1 AND 5 THEN (r.codes & 255) - 1 ELSE 5 END::TINYINT AS kind,
       n.nudge_id IS NOT NULL AS nudged
FROM rounds_core r
SEMI JOIN (SELECT DISTINCT session_id, turn_id FROM rounds_core
           WHERE codes & 255 IN (3, 4, 5)  -- dropped_tool_call, no_tool, narrated_intent
             AND hash(session_id) % $parts::UBIGINT = $part::UBIGINT) s USING (session_id, turn_id)
LEFT JOIN rounds_nudges n ON n.session_id = r.session_id AND n.seq = r.seq
