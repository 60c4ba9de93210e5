-- The report's per-session summary of the stall replay (stallscan.report.cells), which the "Stalls" section
-- reads instead of rounds and turns (stalls, one row per stall round, it reads as it is):
--   round_cells      rounds per session, harness and round kind;
--   turn_cells       turns per session, harness, model, provider, outcome and whether they had a reply;
--   signature_cells  per session and signature id: rounds it matched (of them vetoed, and outside the
--                    after-a-tool-round window), rounds it decided (of them outside the window, and ones the
--                    harness itself answered with a stall nudge).
-- Inputs: rounds, turns, resolved through the search path (the scratch schema of an incremental run holds
-- only the changed sessions: stallscan.replay.derive).
CREATE OR REPLACE TABLE round_cells AS
SELECT session_id, source_format, round_kind, count(*) AS n
FROM rounds GROUP BY ALL;

CREATE OR REPLACE TABLE turn_cells AS
SELECT session_id, source_format, model, provider, outcome, n_rounds > 0 AS with_rounds, count(*) AS n
FROM turns GROUP BY ALL;

CREATE OR REPLACE TABLE signature_cells AS
WITH m AS (
    SELECT session_id, unnest(sig_hits || veto_hits || wait_hits) AS id, after_tool_round,
           vetoed OR (len(wait_hits) > 0 AND background IS NOT NULL) AS vetoed
    FROM rounds
), matched AS (
    SELECT session_id, id, count(*) AS matched,
           count(*) FILTER (WHERE vetoed) AS matched_vetoed,
           count(*) FILTER (WHERE NOT after_tool_round) AS matched_outside
    FROM m GROUP BY ALL
), decided AS (
    SELECT session_id, signature AS id, count(*) AS decided,
           count(*) FILTER (WHERE NOT after_tool_round) AS decided_outside,
           count(*) FILTER (WHERE nudge_reacts_to IN ('narrated', 'no_tool', 'dropped')) AS decided_nudged
    FROM rounds WHERE signature IS NOT NULL GROUP BY ALL
)
SELECT session_id, id,
       coalesce(matched, 0) AS matched, coalesce(matched_vetoed, 0) AS matched_vetoed,
       coalesce(matched_outside, 0) AS matched_outside, coalesce(decided, 0) AS decided,
       coalesce(decided_outside, 0) AS decided_outside, coalesce(decided_nudged, 0) AS decided_nudged
FROM matched FULL JOIN decided USING (session_id, id);
