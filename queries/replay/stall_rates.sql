-- Silent plan-as-answer endings (and all plan endings: silent + exhausted) per 1,000 turns with a reply,
-- by harness (source_format), by model and by provider. Input: turns_by_seq, stall_scope.
WITH t AS (
    SELECT source_format, coalesce(model, 'unknown') AS model, provider, outcome
    FROM turns_by_seq WHERE n_rounds > 0 AND session_id IN (SELECT session_id FROM stall_scope)
), d AS (
    SELECT 'harness' AS dimension, source_format AS key, outcome FROM t
    UNION ALL SELECT 'model', model, outcome FROM t
    UNION ALL SELECT 'provider', provider, outcome FROM t
)
SELECT dimension, key, count(*) AS turns,
       count(*) FILTER (WHERE outcome = 'silent_plan_as_answer') AS silent,
       count(*) FILTER (WHERE outcome = 'exhausted') AS exhausted,
       round(1000.0 * count(*) FILTER (WHERE outcome = 'silent_plan_as_answer') / count(*), 2) AS silent_per_1000,
       round(1000.0 * count(*) FILTER (WHERE outcome IN ('silent_plan_as_answer', 'exhausted')) / count(*), 2)
         AS plan_endings_per_1000
FROM d GROUP BY ALL
ORDER BY dimension, silent_per_1000 DESC, turns DESC, key;
