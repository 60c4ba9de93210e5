-- The stored sweep cells of the sessions in the report's scope, with the dense session index the bootstrap
-- resamples (session_id order, as sweep/sweep_input.sql numbers them) and the session's key its bootstrap
-- weights are drawn from (stallscan.sweep.bootstrap). Inputs: sweep_bins, scope_sessions.
-- Parameter: $by (source_format / model / none) picks the group column.
-- The index and the key are computed once per session (s), not once per cell, and joined to the cells.
WITH s AS (
    SELECT session_id, (row_number() OVER (ORDER BY session_id) - 1)::INTEGER AS sess,
           md5_number_lower(session_id) AS skey
    FROM (SELECT DISTINCT session_id FROM sweep_bins WHERE session_id IN (SELECT session_id FROM scope_sessions))
)
SELECT s.sess, s.skey,
       CASE $by WHEN 'model' THEN coalesce(c.model, '(unknown)')
                WHEN 'none' THEN 'all' ELSE c.source_format END AS grp,
       c.bin, c.human, c.vgr_gap, c.decided_human, c.has_gap, c.first_in_session, c.by_fallback,
       c.marker_gap, c.marker_decided_human, c.notif_gap, c.notif_decided_human, c.both_gap,
       c.both_decided_human, c.n::DOUBLE AS n
FROM sweep_bins c
JOIN s USING (session_id)
ORDER BY s.sess, c.bin;
