-- Corpus overview per harness (source_format): files, sessions, turns started by user messages, events, span.
SELECT source_format AS harness,
       count(DISTINCT file)                                    AS files,
       count(DISTINCT session_id)                              AS sessions,
       count(*)                                                AS events,
       count(*) FILTER (WHERE role = 'user' AND kind IN ('message', 'queued_input')) AS user_messages,
       count(*) FILTER (WHERE role = 'assistant')              AS replies,
       sum(n_tool_calls)::BIGINT                               AS tool_calls,
       min(ts)                                                 AS first_ts,
       max(ts_end)                                             AS last_ts
FROM scoped_events GROUP BY ALL ORDER BY harness;
