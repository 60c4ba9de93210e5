-- Corpus overview per harness (source_format): files, sessions, turns started by user messages, events, span.
-- Input: session_cells (report/cells_sessions.sql: per session and file), scoped() (report/scoped_events.sql).
SELECT source_format AS harness,
       count(DISTINCT file)                       AS files,
       count(DISTINCT session_id)                 AS sessions,
       sum(events)::BIGINT                        AS events,
       sum(user_messages)::BIGINT                 AS user_messages,
       sum(replies)::BIGINT                       AS replies,
       sum(tool_calls)::BIGINT                    AS tool_calls,
       min(first_ts)                              AS first_ts,
       max(last_ts)                               AS last_ts
FROM scoped('session_cells')
GROUP BY ALL ORDER BY harness;
