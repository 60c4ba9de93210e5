-- Turn boundaries, step 1: the narrow columns the previous-reply scan reads (stallscan/replay/scan_bounds.py),
-- one row per event in storage order (no ORDER BY: the scan sorts only when sessions are not already grouped),
-- the rows of one rowid range [$lo, $hi) at a time (DuckDB skips the row groups outside it).
-- Input: events. status: the completion report of an assistant event from its own fields, as a code into
-- ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'] (0-based), -2 for a user-role event or tool
-- result (a row of turn_boundaries), -3 for another role between 'tool' and 'user' (tb_scan holds a row of each,
-- as turn_boundaries.sql reads the events of that range beside it), -1 for the other roles (one TINYINT where the
-- reply and user / tool flags were two more columns to fetch and unpack); anchored
-- regexes, not trim(), so no reply text is copied; each regex runs only on the replies whose first character
-- can start a match (a whitespace code, 9-13 or 32, or the pattern's first character; one RE2 call per reply and
-- pattern was 0.14 CPU s of the 0.4 this query took at 2M generated events). That first character is tested by
-- comparing the text with one-character bounds (t >= 'O' AND t < 'P': the text starts with 'O'), which DuckDB
-- answers from the four bytes a string keeps inline, where ascii() reads the text itself: the status 0.083 ->
-- 0.047 CPU s at 2M generated events (one thread), the same codes.
-- t_us: the time the gap is measured with, a reply's end or another event's start, in microseconds since the
-- epoch, or the smallest BIGINT when it is not trustworthy (not per_message, or missing; was a flag of its own).
SELECT e.rowid AS rid, e.session_id, e.seq,
       CASE WHEN e.role IN ('user', 'tool') THEN -2
            WHEN e.role >= 'tool' AND e.role <= 'user' THEN -3
            WHEN e.role <> 'assistant' THEN -1
            WHEN e.finish_norm = 'length' THEN 0
            WHEN e.finish_norm = 'cancelled' OR ((e.text >= chr(9) AND e.text < chr(14) OR e.text >= ' ' AND e.text < '!' OR e.text >= 'O' AND e.text < 'P') AND regexp_matches(e.text, '^\s*Operation interrupted: ')) THEN 1
            WHEN e.finish_norm IN ('error', 'content_filter') OR e.model = '<synthetic>'
                 OR ((e.text >= chr(9) AND e.text < chr(14) OR e.text >= ' ' AND e.text < '!' OR e.text >= 'A' AND e.text < 'B') AND regexp_matches(e.text, '^\s*API Error'))
                 OR ((e.text >= chr(9) AND e.text < chr(14) OR e.text >= ' ' AND e.text < '!' OR e.text >= 'F' AND e.text < 'G')
                     AND regexp_full_match(e.text, '\s*Failure: I did not provide a response\.\s*')) THEN 2
            WHEN e.n_tool_calls > 0 THEN 3
            WHEN e.text IS NULL OR ((e.text = '' OR (e.text >= chr(9) AND e.text < chr(14) OR e.text >= ' ' AND e.text < '!' OR e.text >= '(' AND e.text < ')'))
                                   AND regexp_full_match(e.text, '\s*(\(empty\))?\s*')) THEN 4
            ELSE 5 END::TINYINT AS status,
       coalesce(CASE WHEN e.ts_quality = 'per_message'
                     THEN epoch_us(CASE WHEN e.role = 'assistant' THEN e.ts_end ELSE e.ts END) END,
                -9223372036854775808) AS t_us
FROM events e
WHERE e.rowid >= $lo AND e.rowid < $hi
