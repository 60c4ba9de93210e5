-- Report "Stalls": silent plan-as-answer endings (and all plan endings: silent + exhausted) per 1,000 turns
-- with a reply, by harness (source_format), by model and by provider (the rows of replay/stall_rates.sql,
-- from the per-session cells: report/cells_stalls.sql). Input: turn_cells, scoped() (report/scoped_events.sql).
WITH t AS (
    SELECT source_format, coalesce(model, 'unknown') AS model, provider, outcome, n
    FROM scoped('turn_cells') WHERE with_rounds
), d AS (
    SELECT 'harness' AS dimension, source_format AS key, outcome, n FROM t
    UNION ALL SELECT 'model', model, outcome, n FROM t
    UNION ALL SELECT 'provider', provider, outcome, n FROM t
), c AS (
    SELECT dimension, key, sum(n)::BIGINT AS turns,
           coalesce(sum(n) FILTER (WHERE outcome = 'silent_plan_as_answer'), 0)::BIGINT AS silent,
           coalesce(sum(n) FILTER (WHERE outcome = 'exhausted'), 0)::BIGINT AS exhausted
    FROM d GROUP BY ALL
)
SELECT dimension, key, turns, silent, exhausted,
       round(1000.0 * silent / turns, 2) AS silent_per_1000,
       round(1000.0 * (silent + exhausted) / turns, 2) AS plan_endings_per_1000
FROM c
ORDER BY dimension, silent_per_1000 DESC, turns DESC, key;
