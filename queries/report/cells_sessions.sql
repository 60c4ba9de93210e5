-- The report's per-session summary of events (table session_cells, stallscan.report.cells): one row per
-- (session, source_format, file) with its event counts and time span, and the session's models. The report's
-- scope (report/scoped_events.sql) and its corpus section (report/corpus_summary.sql) read these rows, never
-- the events. Input: events (resolved through the search path, so the same statement runs on the scratch
-- schema of an incremental run, holding only the changed sessions: stallscan.replay.derive).
CREATE OR REPLACE TABLE session_cells AS
SELECT session_id, source_format, file,
       count(*)                                                                      AS events,
       count(*) FILTER (WHERE role = 'user' AND kind IN ('message', 'queued_input')) AS user_messages,
       count(*) FILTER (WHERE role = 'assistant')                                    AS replies,
       sum(n_tool_calls)::BIGINT                                                     AS tool_calls,
       min(ts)                                                                       AS first_ts,
       max(ts_end)                                                                   AS last_ts,
       list(DISTINCT model) FILTER (WHERE model IS NOT NULL)                         AS models
FROM events
GROUP BY ALL;
