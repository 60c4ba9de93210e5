-- `stallscan boundaries`: the replayed decisions, one row per user-role record, in session order.
-- Parameters: $session (VARCHAR or NULL = all), $errors_only (BOOLEAN), $all (BOOLEAN: also plain tool
-- results and records that are not requests), $sessions (VARCHAR[]: the sessions the shared filters keep,
-- or NULL = all), $limit (INTEGER or NULL). Input: turn_boundaries, events.
-- truth / truth_note: who wrote the record (queries/store/truth_macros.sql); origin is the envelope's label.
SELECT t.session_id, t.seq, e.file, e.line, t.ts, t.gap_s, t.prev_reply_status, t.initiator, t.decided_by,
       t.decision, truth(t.origin, t.is_human_turn) AS truth, truth_note(t.origin, t.is_human_turn) AS truth_note,
       t.origin, t.origin_rule, t.is_human_turn, t.starts_request, t.error,
       t.gap_only_decision, t.header_only_decision, t.source_format AS harness, t.event_id,
       left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 100) AS excerpt
FROM turn_boundaries_by_seq t JOIN events e USING (event_id)
WHERE ($session::VARCHAR IS NULL OR t.session_id = $session::VARCHAR OR starts_with(t.session_id, $session::VARCHAR || '/'))
  AND ($sessions::VARCHAR[] IS NULL OR list_contains($sessions::VARCHAR[], t.session_id))
  AND (NOT $errors_only::BOOLEAN OR t.error IN ('auto_as_human', 'human_as_auto'))
  AND ($all::BOOLEAN OR $errors_only::BOOLEAN OR (t.starts_request AND (t.origin <> 'tool_result' OR t.human_content)))
ORDER BY t.session_id, t.seq
LIMIT coalesce($limit::INTEGER, 2147483647);
