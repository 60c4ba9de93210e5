-- Stall replay, step 1a: the narrow columns of every event that its turn and round numbers are counted from
-- (stallscan/replay/scan.py runs the segmented scans over them), and what its turn's row in `turns` counts or
-- picks: reply_info, -1 on an event that is no reply, else a reply's tool calls times 4, plus 1 when it names a
-- model and 2 when it names a finish reason (one INTEGER where a flag, the calls and two more flags were four
-- columns: the fetch and its conversion 0.113 -> 0.087 CPU s at 2M generated events), and the event's times (ts_lo: ts, ts_hi: ts_end else ts, in microseconds since the epoch; a NULL time is the largest
-- / smallest BIGINT, which no minimum / maximum of a turn with a time keeps). Input: events.
-- Storage order (no ORDER BY: the scan checks the order and sorts only when sessions are not already grouped).
SELECT e.rowid AS rid, e.session_id, e.seq,
       CASE WHEN e.role = 'assistant'
            THEN e.n_tool_calls * 4 + (e.model IS NOT NULL)::INTEGER + 2 * (e.finish_reason IS NOT NULL)::INTEGER
            ELSE -1 END AS reply_info,
       coalesce(epoch_us(e.ts), 9223372036854775807) AS ts_lo,
       coalesce(epoch_us(coalesce(e.ts_end, e.ts)), -9223372036854775808) AS ts_hi
FROM events e
WHERE e.rowid >= $lo AND e.rowid < $hi
