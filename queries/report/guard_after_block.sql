-- Report section "Guard": what followed each block, read from the transcript the block was made in (the
-- harness session, ingested beside the guard log) and from the guard's next record of that session.
-- Input: scoped_events (guard records), events (the transcripts). Parameter: $window (seconds a person
-- interrupting after a block counts as a likely false block; 60).
--   person_within_window  a person's message (not isMeta, not a hook's feedback) came before any tool call
--                          and within $window seconds of the block: a likely false block
--   tool_call             a reply with a tool call landed before the guard's next stop
--   budget_spent          the next stop was let through because the bound was reached
--   blocked_again         the next stop was blocked again (no tool call in between)
--   final                 the next stop was a genuine final, let through
--   unknown               neither the transcript nor a later guard record says (transcript not ingested)
WITH blocks AS (
    SELECT event_id, ts, meta ->> 'session' AS session, meta ->> 'signature' AS signature,
           TRY_CAST(meta ->> 'stalls' AS INTEGER) AS stalls, meta ->> 'harness' AS harness, session_id AS guard_session
    FROM scoped_events
    WHERE source_format = 'stallscan_guard' AND kind = 'guard_decision' AND meta ->> 'decision' = 'block'
), nxt AS (
    SELECT b.event_id,
           (SELECT min(g.ts) FROM events g WHERE g.session_id = b.guard_session AND g.kind = 'guard_decision'
                AND g.ts > b.ts) AS next_ts
    FROM blocks b
), follow AS (
    SELECT b.*, n.next_ts,
           (SELECT g.meta ->> 'decision' FROM events g WHERE g.session_id = b.guard_session
                AND g.kind = 'guard_decision' AND g.ts = n.next_ts LIMIT 1) AS next_decision,
           (SELECT g.meta ->> 'reason' FROM events g WHERE g.session_id = b.guard_session
                AND g.kind = 'guard_decision' AND g.ts = n.next_ts LIMIT 1) AS next_reason,
           (SELECT min(e.ts) FROM events e WHERE e.session_id = b.session
                AND e.role = 'assistant' AND e.n_tool_calls > 0 AND e.ts > b.ts) AS tool_ts,
           (SELECT min(e.ts) FROM events e WHERE e.session_id = b.session
                AND e.role = 'user' AND e.kind IN ('message', 'queued_input') AND e.ts > b.ts
                AND coalesce(e.meta ->> 'isMeta', 'false') <> 'true'
                AND NOT starts_with(coalesce(e.text, ''), 'Stop hook feedback:')
                AND NOT starts_with(coalesce(e.text, ''), 'SubagentStop hook feedback:')
                AND NOT contains(coalesce(e.text, ''), '[stallscan guard]')) AS human_ts
    FROM blocks b JOIN nxt n USING (event_id)
)
SELECT event_id, ts, session, harness, signature, stalls,
       CASE WHEN human_ts IS NOT NULL AND human_ts <= ts + to_seconds($window::DOUBLE)
                 AND (tool_ts IS NULL OR human_ts < tool_ts) THEN 'person_within_window'
            WHEN tool_ts IS NOT NULL AND (next_ts IS NULL OR tool_ts < next_ts) THEN 'tool_call'
            WHEN next_reason = 'bound reached' THEN 'budget_spent'
            WHEN next_decision = 'block' THEN 'blocked_again'
            WHEN next_reason = 'no stall' THEN 'final'
            ELSE 'unknown' END AS followed_by
FROM follow
ORDER BY ts, event_id;
