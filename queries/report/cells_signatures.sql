-- Per session and signature id (table signature_cells, stallscan.report.summary_cells), for the "Stalls" section's
-- signature table: rounds it matched (of them vetoed, and outside the after-a-tool-round window), rounds it
-- decided (of them outside the window, and ones the harness itself answered with a stall nudge).
-- Input: rounds_narrow (the stored columns of rounds); cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
WITH r AS (
    SELECT * FROM rounds_narrow WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
), m AS (
    SELECT session_id, unnest(sig_hits || veto_hits || wait_hits) AS id, after_tool_round,
           vetoed OR (len(wait_hits) > 0 AND background IS NOT NULL) AS vetoed
    FROM r
), matched AS (
    SELECT session_id, id, count(*) AS matched,
           count(*) FILTER (WHERE vetoed) AS matched_vetoed,
           count(*) FILTER (WHERE NOT after_tool_round) AS matched_outside
    FROM m GROUP BY ALL
), decided AS (
    SELECT session_id, signature AS id, count(*) AS decided,
           count(*) FILTER (WHERE NOT after_tool_round) AS decided_outside,
           count(*) FILTER (WHERE nudge_reacts_to IN ('narrated', 'no_tool', 'dropped')) AS decided_nudged
    FROM r WHERE signature IS NOT NULL GROUP BY ALL
)
SELECT session_id, id,
       coalesce(matched, 0) AS matched, coalesce(matched_vetoed, 0) AS matched_vetoed,
       coalesce(matched_outside, 0) AS matched_outside, coalesce(decided, 0) AS decided,
       coalesce(decided_outside, 0) AS decided_outside, coalesce(decided_nudged, 0) AS decided_nudged
FROM matched FULL JOIN decided USING (session_id, id);
