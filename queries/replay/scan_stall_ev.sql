-- Stall replay, step 1a: the narrow columns of every event that its turn and round numbers are counted from
-- (stallscan/replay/scan.py runs the segmented scans over them), and what its turn's row in `turns` counts or
-- picks: a reply's tool calls (reply_calls, 0 on other events), whether it names a model / a finish reason, and
-- the event's times (ts_lo: ts, ts_hi: ts_end else ts, in microseconds since the epoch; a NULL time is the largest
-- / smallest BIGINT, which no minimum / maximum of a turn with a time keeps). Input: events.
-- Storage order (no ORDER BY: the scan checks the order and sorts only when sessions are not already grouped).
SELECT e.rowid AS rid, e.session_id, e.seq,
       e.role = 'assistant' AS reply,
       CASE WHEN e.role = 'assistant' THEN e.n_tool_calls ELSE 0 END AS reply_calls,
       e.role = 'assistant' AND e.model IS NOT NULL AS has_model,
       e.role = 'assistant' AND e.finish_reason IS NOT NULL AS has_finish,
       coalesce(epoch_us(e.ts), 9223372036854775807) AS ts_lo,
       coalesce(epoch_us(coalesce(e.ts_end, e.ts)), -9223372036854775808) AS ts_hi
FROM events e
WHERE e.rowid >= $lo AND e.rowid < $hi
