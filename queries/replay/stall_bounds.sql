-- Replay other retry bounds over the logged stalls: for each N in $bounds (INTEGER[]), the endings the
-- fixed harness with bound N would change.
--   would_reprompt: turns that delivered a plan (silent / exhausted) at a dropped-family stall index <= N
--                   (or a narrated index <= the replay's narrated bound): bound N re-prompts instead;
--   would_deliver:  episodes that recovered / were answered only after a dropped-family stall index > N:
--                   bound N delivers stall N+1 as the answer instead.
-- Input: stalls, stall_replay_info, stall_scope.
WITH b AS (SELECT unnest($bounds::INTEGER[]) AS bound),
s AS (SELECT * FROM stalls WHERE session_id IN (SELECT session_id FROM stall_scope)),
ep AS (
    SELECT session_id, turn_id, episode, any_value(outcome) AS outcome,
           max(stall_index) FILTER (WHERE round_kind <> 'narrated_intent') AS max_dropped_index
    FROM s GROUP BY ALL
)
SELECT b.bound,
       (SELECT count(*) FROM s WHERE s.delivered AND s.outcome IN ('silent_plan_as_answer', 'exhausted')
          AND s.stall_index <= CASE WHEN s.round_kind = 'narrated_intent'
                                    THEN (SELECT narrated_bound FROM stall_replay_info) ELSE b.bound END) AS would_reprompt,
       (SELECT count(*) FROM ep WHERE ep.outcome IN ('recovered', 'answered') AND ep.max_dropped_index > b.bound) AS would_deliver,
       (SELECT count(*) FROM s WHERE s.delivered AND s.outcome IN ('silent_plan_as_answer', 'exhausted')) AS plan_endings
FROM b ORDER BY b.bound;
