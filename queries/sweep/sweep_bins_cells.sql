-- The stored sweep cells of the report's threshold grid (stallscan.sweep.bins): per session, group columns,
-- gap bin and decision flags, the number of events (n). Input: `sweep_bins_rows` (registered by the caller:
-- sweep/sweep_bins_input.sql's rows binned by stallscan.sweep.core.sweep_cells). Written where the search
-- path points (main, or the scratch schema of an incremental run).
CREATE OR REPLACE TABLE sweep_bins AS
SELECT session_id, source_format, model, bin, human, vgr_gap, decided_human, has_gap, first_in_session,
       by_fallback, marker_gap, marker_decided_human, notif_gap, notif_decided_human, both_gap,
       both_decided_human, count(*)::BIGINT AS n
FROM sweep_bins_rows
GROUP BY ALL
ORDER BY session_id, bin;
