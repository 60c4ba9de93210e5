-- Turn boundaries, step 1: the narrow columns the previous-reply scan reads (stallscan/replay/scan_bounds.py),
-- one row per event in storage order (no ORDER BY: the scan sorts only when sessions are not already grouped),
-- the rows of one rowid range [$lo, $hi) at a time (DuckDB skips the row groups outside it).
-- Input: events. status: the completion report of an assistant event from its own fields, as a code into
-- ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'] (0-based; -1 for other roles); anchored
-- regexes, not trim(), so no reply text is copied; each regex runs only on the replies whose first character
-- can start a match (ascii(): a whitespace code, 9-13 or 32, or the pattern's first character; one RE2 call
-- per reply and pattern was 0.14 CPU s of the 0.4 this query took at 2M generated events).
-- ut: a user-role event or tool result (a row of turn_boundaries). t_us / t_ok: the time the gap is measured
-- with, a reply's end or another event's start, and whether it is trustworthy (per_message and present).
-- reply_id: a reply's event id (NULL for other rows).
SELECT e.rowid AS rid, e.session_id, e.seq,
       e.role = 'assistant' AS reply,
       coalesce(e.role IN ('user', 'tool'), false) AS ut,
       CASE WHEN e.role <> 'assistant' THEN -1
            WHEN e.finish_norm = 'length' THEN 0
            WHEN e.finish_norm = 'cancelled' OR (ascii(e.text) IN (9, 10, 11, 12, 13, 32, 79) AND regexp_matches(e.text, '^\s*Operation interrupted: ')) THEN 1
            WHEN e.finish_norm IN ('error', 'content_filter') OR e.model = '<synthetic>'
                 OR (ascii(e.text) IN (9, 10, 11, 12, 13, 32, 65) AND regexp_matches(e.text, '^\s*API Error'))
                 OR (ascii(e.text) IN (9, 10, 11, 12, 13, 32, 70)
                     AND regexp_full_match(e.text, '\s*Failure: I did not provide a response\.\s*')) THEN 2
            WHEN e.n_tool_calls > 0 THEN 3
            WHEN e.text IS NULL OR ((e.text = '' OR ascii(e.text) IN (9, 10, 11, 12, 13, 32, 40))
                                   AND regexp_full_match(e.text, '\s*(\(empty\))?\s*')) THEN 4
            ELSE 5 END::TINYINT AS status,
       CASE WHEN e.role = 'assistant' THEN e.event_id END AS reply_id,
       coalesce(e.ts_quality = 'per_message' AND (CASE WHEN e.role = 'assistant' THEN e.ts_end ELSE e.ts END) IS NOT NULL,
                false) AS t_ok,
       coalesce(epoch_us(CASE WHEN e.role = 'assistant' THEN e.ts_end ELSE e.ts END), 0) AS t_us
FROM events e
WHERE e.rowid >= $lo AND e.rowid < $hi
