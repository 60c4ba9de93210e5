-- Stall replay, step 4a: the narrow columns of the rounds the bounded re-prompt walk reads: every round of a
-- turn that holds a stall (no other turn is walked), one share of the sessions at a time (part $part of
-- $parts, by a hash of the session id, so a session is never cut; stallscan/replay/stall_scans.py runs the walk as
-- segmented scans over turns and episodes). Input: rounds_core, rounds_nudges.
-- kind: 0 tool_round, 1 final (the breakers), 2 dropped_tool_call, 3 no_tool (the dropped family),
-- 4 narrated_intent, 5 any other round. Any order (the scan orders the rows by session and seq).
SELECT r.rowid AS rid, r.session_id, r.seq, r.turn_id::BIGINT AS turn_id,
       CASE r.round_kind WHEN 'tool_round' THEN 0 WHEN 'final' THEN 1 WHEN 'dropped_tool_call' THEN 2
                         WHEN 'no_tool' THEN 3 WHEN 'narrated_intent' THEN 4 ELSE 5 END::TINYINT AS kind,
       n.nudge_id IS NOT NULL AS nudged
FROM rounds_core r
SEMI JOIN (SELECT DISTINCT session_id, turn_id FROM rounds_core
           WHERE round_kind IN ('dropped_tool_call', 'no_tool', 'narrated_intent')
             AND hash(session_id) % $parts::UBIGINT = $part::UBIGINT) s USING (session_id, turn_id)
LEFT JOIN rounds_nudges n ON n.session_id = r.session_id AND n.seq = r.seq
