-- Recovery curve per harness over stall episodes (stalls of one turn between two breakers).
-- For k = 0, 1, 2, ... nudges: reached = episodes that got at least k nudges; recovered_here = episodes
-- that recovered (landed a tool call) after exactly k nudges; rate = recovered_here / reached;
-- cumulative_share = share of all recovered episodes that needed <= k nudges (a retry bound of k keeps them).
-- Input: stalls, stall_scope.
WITH ep AS (
    SELECT source_format AS harness, session_id, turn_id, episode,
           max(episode_nudges) AS nudges, bool_or(outcome = 'recovered') AS recovered
    FROM stalls WHERE session_id IN (SELECT session_id FROM stall_scope)
    GROUP BY ALL
), h AS (
    SELECT harness, count(*) AS episodes, count(*) FILTER (WHERE recovered) AS recovered_total,
           max(nudges) AS max_nudges
    FROM ep GROUP BY ALL
), k AS (
    SELECT h.*, unnest(generate_series(0, greatest(h.max_nudges, 3))) AS nudges FROM h
)
SELECT k.harness, k.episodes, k.recovered_total, k.nudges::INTEGER AS nudges,
       (SELECT count(*) FROM ep WHERE ep.harness = k.harness AND ep.nudges >= k.nudges) AS reached,
       (SELECT count(*) FROM ep WHERE ep.harness = k.harness AND ep.nudges = k.nudges AND ep.recovered) AS recovered_here,
       round((SELECT count(*) FROM ep WHERE ep.harness = k.harness AND ep.nudges = k.nudges AND ep.recovered)
             / nullif((SELECT count(*) FROM ep WHERE ep.harness = k.harness AND ep.nudges >= k.nudges), 0), 4) AS rate,
       round((SELECT count(*) FROM ep WHERE ep.harness = k.harness AND ep.nudges <= k.nudges AND ep.recovered)
             / nullif(k.recovered_total, 0), 4) AS cumulative_share
FROM k ORDER BY k.harness, k.nudges;
