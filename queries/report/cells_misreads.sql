-- The router's errors (auto_as_human / human_as_auto) per session (table boundary_misreads,
-- stallscan.report.summary_cells), for the worst-first list of report/boundaries_errors.sql and the examples of
-- report/boundaries_examples.sql. Each error carries its event's file, line and excerpt (whitespace folded,
-- masked, 160 characters), taken here for the sessions summarised, so the report's queries never join the
-- events by event_id (a scan of every event's text: 0.2 s of a one-session report on 57k events).
-- far (the gap's distance from the threshold on a log scale, as the worst-first list ranks errors), session_errors
-- (the session's errors) and in_session (its rank in the session, worst first) are the session's alone, so they
-- are kept here too: the examples read one row per session instead of ranking every error on each report.
-- Input: cells_boundary_rows() (report/cells_boundary_rows.sql: turn_boundaries, or the changed sessions' rows of
-- it), events; cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build). redact: stallscan/store/redact.py.
-- An incremental refresh first sets cells_misread_ids, the changed sessions' errors' event ids (the statement
-- before the SELECT: stallscan.report.summary_cells runs it, and resets the variable after): the SELECT reads
-- `events` through that constant list (a filter in the scan), so it has no join that DuckDB can turn around. With
-- the changed sessions as a semi join on `events`, as before, some runs built every event (1M rows with their text)
-- into the hash table instead of the errors (0.17-0.23 s and 190 MB more; docs/benchmarks.md, "(stmt20)"). A full
-- build ($all) leaves the variable unset and joins every error.
-- The variable holds the errors' sessions beside their ids, and the scan filters on both: the session filter
-- skips the row groups and rows of other sessions before any event_id is compared (an event_id list alone
-- compared every event's id: 7 / 15 CPU ms warm, 50 cold, on the 311 MB tree's / the 1M-event database, against
-- 0.7 ms).
SET VARIABLE cells_misread_ids = (
    SELECT {'ids': list(event_id), 'sessions': list(DISTINCT session_id)} FROM cells_boundary_rows()
    WHERE error IN ('auto_as_human', 'human_as_auto') AND session_id IN (SELECT session_id FROM cells_changed));

WITH err AS (
    SELECT event_id, session_id, seq, ts, gap_s, prev_reply_status, decided_by, decision, origin, origin_rule,
           error, source_format, threshold,
           CASE WHEN gap_s IS NOT NULL THEN abs(ln(greatest(gap_s, 0.001) / greatest(threshold, 0.001))) END AS far
    FROM cells_boundary_rows()
    WHERE error IN ('auto_as_human', 'human_as_auto')
      AND ($all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed))
)
SELECT t.*, e.file, e.line, left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt,
       count(*) OVER (PARTITION BY t.session_id) AS session_errors,
       row_number() OVER (PARTITION BY t.session_id ORDER BY t.far DESC NULLS LAST, t.ts NULLS LAST, t.seq) AS in_session
FROM err t
JOIN events e ON e.event_id = t.event_id
             AND ($all::BOOLEAN OR (list_contains(getvariable('cells_misread_ids').sessions, e.session_id)
                                    AND list_contains(getvariable('cells_misread_ids').ids, e.event_id)));
