-- The cells an incremental sweep_bins refresh replaces (sign -1: main.sweep_bins rows of the changed
-- sessions) and the ones it puts in their place (sign 1: the scratch schema's sweep_bins, computed by
-- stallscan.replay.derive for those sessions), as stallscan.sweep.boot adds them to the bootstrap's sums.
-- Inputs: main.sweep_bins, stallscan_inc.sweep_bins (derive.SCRATCH), derive_sessions.
SELECT sign,
       (dense_rank() OVER (PARTITION BY sign ORDER BY session_id) - 1)::INTEGER AS sess,
       md5_number_lower(session_id) AS skey,
       bin, human, vgr_gap, decided_human, has_gap, first_in_session, by_fallback, marker_gap,
       marker_decided_human, notif_gap, notif_decided_human, both_gap, both_decided_human, n::DOUBLE AS n
FROM (SELECT -1 AS sign, * FROM main.sweep_bins WHERE session_id IN (SELECT session_id FROM derive_sessions)
      UNION ALL BY NAME
      SELECT 1 AS sign, * FROM stallscan_inc.sweep_bins)
ORDER BY sign, session_id, bin;
