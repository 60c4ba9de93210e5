-- sweep_input.sql's rows for the local sweep of the whole scope when no rule variant is swept (by = none):
-- the same rows, as narrow numbers only and in no set order (what reads them only counts: bincounts and
-- np.unique over the session index and bin, stallscan.sweep.cells.policy_parts; the ORDER BY s.sess, b.seq it
-- had cost 0.08 of 0.5 CPU s at 10M generated events): no session_id, group or decided_by string (at 10M
-- generated events the strings were 48 of the 64 MB the wide rows carried to Arrow, and their numpy objects
-- 0.15 CPU s). The session's index and key come from scope_sessions (166,667 rows at 10M events) joined to the
-- rows, not from a DISTINCT over the 1.25M rows joined back to them: the statement and its Arrow copy 0.84 ->
-- 0.40 CPU s. A scope session without rows leaves a gap in the index, which only orders the sessions (the
-- sweep's np.unique over it, stallscan.sweep.cells.policy_parts, makes it dense).
-- Inputs: turn_boundaries, scope_sessions. Output columns: sess, skey, human, vgr_gap, decided_human, gap_s,
-- first_in_session, by_fallback (sweep_input.sql's, decided_by read as vgr_gap = decided_by = 'gap').
WITH s AS MATERIALIZED (
    SELECT session_id,
           (row_number() OVER (ORDER BY session_id) - 1)::INTEGER AS sess,  -- session_id order, as sweep_input.sql's
           md5_number_lower(session_id) AS skey
    FROM (SELECT DISTINCT session_id FROM scope_sessions)
)
SELECT s.sess, s.skey,
       coalesce(b.is_human_turn, false) AS human,
       coalesce(b.decided_by = 'gap', false) AS vgr_gap,
       coalesce(b.decision = 'human', false) AS decided_human,
       coalesce(b.gap_s, 'NaN'::DOUBLE) AS gap_s,
       b.prev_reply_status IS NULL AS first_in_session,
       coalesce(b.origin_rule, '') IN ('default_human', '') AS by_fallback
FROM turn_boundaries_by_seq b JOIN s USING (session_id)
WHERE b.starts_request AND b.origin <> 'tool_result';
