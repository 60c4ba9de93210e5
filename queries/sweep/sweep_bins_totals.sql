-- The stored sweep cells (sweep_bins) of every session summed over the sessions: one row per gap bin and set
-- of decision flags, n = the events in it; on every row n_sess = how many sessions the cells hold and
-- n_scoped = how many of them the report's scope (scope_sessions) holds. The whole-corpus report sweep
-- reads these (a few thousand rows, not a row per session and bin) when the scope holds every session and
-- the stored bootstrap sums (sweep_boot) serve every policy, so no per-session part is needed
-- (stallscan.sweep.core.run_sweep). Inputs: sweep_bins, scope_sessions.
WITH cells AS (
    SELECT bin, human, vgr_gap, decided_human, has_gap, first_in_session, by_fallback, marker_gap,
           marker_decided_human, notif_gap, notif_decided_human, both_gap, both_decided_human,
           sum(n)::DOUBLE AS n
    FROM sweep_bins
    GROUP BY ALL
), sessions AS (
    SELECT count(DISTINCT session_id)::BIGINT AS n_sess,
           (count(DISTINCT session_id) FILTER (WHERE session_id IN (SELECT session_id FROM scope_sessions)))::BIGINT
               AS n_scoped
    FROM sweep_bins
)
SELECT cells.*, sessions.n_sess, sessions.n_scoped
FROM sessions LEFT JOIN cells ON true
ORDER BY ALL;
