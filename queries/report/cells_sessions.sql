-- The report's per-session summary of events (table session_cells, stallscan.report.summary_cells): one row per
-- (session, source_format, file) with its event counts and time span, and the session's models. The report's
-- scope (report/scoped_events.sql) and its corpus section (report/corpus_summary.sql) read these rows, never
-- the events. Input: events; cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
SELECT session_id, source_format, file,
       count(*)                                                                      AS events,
       count(*) FILTER (WHERE role = 'user' AND kind IN ('message', 'queued_input')) AS user_messages,
       count(*) FILTER (WHERE role = 'assistant')                                    AS replies,
       sum(n_tool_calls)::BIGINT                                                     AS tool_calls,
       min(ts)                                                                       AS first_ts,
       max(ts_end)                                                                   AS last_ts,
       list(DISTINCT model) FILTER (WHERE model IS NOT NULL)                         AS models
FROM events
WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
GROUP BY ALL;
