-- Rows the threshold sweep works on: every user-role event (not a tool result) that starts a model request, with the
-- truth (is_human_turn), how the router's full order decided it, and the gap when one is trustworthy.
-- Input: turn_boundaries (stallscan.boundaries), scope_sessions (report filters). Parameter: $by
-- (harness / source_format / model / none) picks the group column.
SELECT b.session_id,
       (dense_rank() OVER (ORDER BY b.session_id) - 1)::INTEGER AS sess,  -- dense session index
       md5_number_lower(b.session_id) AS skey,  -- the session's key: its bootstrap weights (stallscan.sweep.bootstrap)
       CASE $by WHEN 'model' THEN coalesce(m.model, '(unknown)')
                WHEN 'none' THEN 'all' ELSE b.source_format END AS grp,
       coalesce(b.is_human_turn, false) AS human,
       coalesce(b.decided_by, '') AS decided_by,
       coalesce(b.decision = 'human', false) AS decided_human,
       coalesce(b.gap_s, 'NaN'::DOUBLE) AS gap_s,
       b.prev_reply_status IS NULL AS first_in_session,
       coalesce(b.origin_rule, '') IN ('default_human', '') AS by_fallback   -- labelled by no marker at all
FROM turn_boundaries b
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m USING (session_id)
WHERE b.starts_request AND b.origin <> 'tool_result' AND b.session_id IN (SELECT session_id FROM scope_sessions)
ORDER BY b.session_id, b.seq;
