-- Rows the threshold sweep works on: every user-role event (not a tool result) that starts a model request, with the
-- truth (is_human_turn), how the router's full order decided it, and the gap when one is trustworthy.
-- Input: turn_boundaries (stallscan.boundaries), scope_sessions (report filters). Parameter: $by
-- (harness / source_format / model / none) picks the group column.
-- The session's dense index (in session_id order) and its bootstrap key are computed once per session (s), not
-- per row (md5 over every row was about a third of the statement's CPU at 10M generated events), and the rows
-- come in (sess, seq) order: the session_id order, sorted on an integer.
WITH b AS (
    SELECT * FROM turn_boundaries_by_seq
    WHERE starts_request AND origin <> 'tool_result' AND session_id IN (SELECT session_id FROM scope_sessions)
), s AS (
    SELECT session_id,
           (row_number() OVER (ORDER BY session_id) - 1)::INTEGER AS sess,  -- dense session index
           md5_number_lower(session_id) AS skey  -- the session's key: its bootstrap weights (stallscan.sweep.bootstrap)
    FROM (SELECT DISTINCT session_id FROM b)
)
SELECT b.session_id, s.sess, s.skey,
       CASE $by WHEN 'model' THEN coalesce(m.model, '(unknown)')
                WHEN 'none' THEN 'all' ELSE b.source_format END AS grp,
       coalesce(b.is_human_turn, false) AS human,
       coalesce(b.decided_by, '') AS decided_by,
       coalesce(b.decision = 'human', false) AS decided_human,
       coalesce(b.gap_s, 'NaN'::DOUBLE) AS gap_s,
       b.prev_reply_status IS NULL AS first_in_session,
       coalesce(b.origin_rule, '') IN ('default_human', '') AS by_fallback   -- labelled by no marker at all
FROM b JOIN s USING (session_id)
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m USING (session_id)
ORDER BY s.sess, b.seq;
