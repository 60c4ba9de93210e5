-- Turn boundaries, step 1: the narrow columns the previous-reply scan reads (stallscan/replay/scan.py), one
-- row per event in storage order (no ORDER BY: the scan sorts only when sessions are not already grouped).
-- Input: events. status: the completion report of an assistant event from its own fields, as a code into
-- ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'] (0-based; -1 for other roles); anchored
-- regexes, not trim(), so no reply text is copied. ts_ok / ts_end_ok: the time is trustworthy (per_message).
SELECT e.rowid AS rid, e.session_id, e.seq,
       e.role = 'assistant' AS reply,
       CASE WHEN e.role <> 'assistant' THEN -1
            WHEN e.finish_norm = 'length' THEN 0
            WHEN e.finish_norm = 'cancelled' OR regexp_matches(coalesce(e.text, ''), '^\s*Operation interrupted: ') THEN 1
            WHEN e.finish_norm IN ('error', 'content_filter') OR e.model = '<synthetic>'
                 OR regexp_matches(coalesce(e.text, ''), '^\s*API Error')
                 OR regexp_full_match(coalesce(e.text, ''), '\s*Failure: I did not provide a response\.\s*') THEN 2
            WHEN e.n_tool_calls > 0 THEN 3
            WHEN e.text IS NULL OR regexp_full_match(e.text, '\s*(\(empty\))?\s*') THEN 4
            ELSE 5 END::TINYINT AS status,
       coalesce(e.ts_quality = 'per_message' AND e.ts IS NOT NULL, false) AS ts_ok,
       coalesce(e.ts_quality = 'per_message' AND e.ts_end IS NOT NULL, false) AS ts_end_ok,
       coalesce(epoch_us(e.ts), 0) AS ts_us,
       coalesce(epoch_us(e.ts_end), 0) AS ts_end_us
FROM events e
