-- Stall replay, step 4a: the narrow columns of every round that the bounded re-prompt walk reads
-- (stallscan/replay/stalls.py runs it as segmented scans over turns and episodes). Input: rounds.
-- kind: 0 tool_round, 1 final (the breakers), 2 dropped_tool_call, 3 no_tool (the dropped family),
-- 4 narrated_intent, 5 any other round. Storage order of rounds (read back beside it by position).
SELECT r.rowid AS rid, r.session_id, r.seq, r.turn_id::BIGINT AS turn_id,
       CASE r.round_kind WHEN 'tool_round' THEN 0 WHEN 'final' THEN 1 WHEN 'dropped_tool_call' THEN 2
                         WHEN 'no_tool' THEN 3 WHEN 'narrated_intent' THEN 4 ELSE 5 END::TINYINT AS kind,
       r.nudge_id IS NOT NULL AS nudged
FROM rounds r
