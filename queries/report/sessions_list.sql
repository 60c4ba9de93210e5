-- `stallscan sessions`: one row per session with its harness, first time, turns (human turns: the stall
-- replay's unit, started by a human-origin record), silent plan-as-answer endings (of those turns), requests
-- (user-role records that start a request: human prompts, human actions in an automatic envelope, automatic
-- prompts, tool results) and misread (of those requests, the ones the router reads wrong), so misread <= requests.
-- Inputs: events, turns_by_seq (replay/stall_*), turn_boundaries (replay/turn_boundaries).
WITH ev AS (
    SELECT session_id, any_value(source_format) AS harness, min(ts) AS start, max(coalesce(ts_end, ts)) AS last,
           count(*) AS events,
           arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
    FROM events GROUP BY session_id
), t AS (
    SELECT session_id, count(*) AS turns,
           count(*) FILTER (WHERE outcome = 'silent_plan_as_answer') AS silent,
           count(*) FILTER (WHERE outcome = 'exhausted') AS exhausted
    FROM turns_by_seq GROUP BY session_id
), b AS (
    SELECT session_id, count(*) FILTER (WHERE starts_request) AS requests,
           count(*) FILTER (WHERE starts_request AND error IN ('auto_as_human', 'human_as_auto')) AS misread
    FROM turn_boundaries_by_seq GROUP BY session_id
)
SELECT ev.session_id, ev.harness, ev.model, ev.start, ev.last, ev.events,
       coalesce(t.turns, 0) AS turns, coalesce(t.silent, 0) AS silent, coalesce(t.exhausted, 0) AS exhausted,
       coalesce(b.requests, 0) AS requests, coalesce(b.misread, 0) AS misread
FROM ev LEFT JOIN t USING (session_id) LEFT JOIN b USING (session_id);
