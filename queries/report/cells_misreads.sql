-- The router's errors (auto_as_human / human_as_auto) per session (table boundary_misreads,
-- stallscan.report.summary_cells), for the worst-first list of report/boundaries_errors.sql and the examples of
-- report/boundaries_examples.sql. Each error carries its event's file, line and excerpt (whitespace folded,
-- masked, 160 characters), taken here for the sessions summarised, so the report's queries never join the
-- events by event_id (a scan of every event's text: 0.2 s of a one-session report on 57k events).
-- Input: turn_boundaries, events; cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build). redact: stallscan/store/redact.py.
WITH err AS (
    SELECT event_id, session_id, seq, ts, gap_s, prev_reply_status, decided_by, decision, origin, origin_rule,
           error, source_format, threshold
    FROM turn_boundaries
    WHERE error IN ('auto_as_human', 'human_as_auto')
      AND ($all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed))
)
SELECT t.*, e.file, e.line, left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM err t
JOIN events e ON e.event_id = t.event_id
             AND ($all::BOOLEAN OR e.session_id IN (SELECT session_id FROM cells_changed));
