-- Stall replay, step 1a: the narrow columns of every event that its turn and round numbers are counted from
-- (stallscan/replay/scan.py runs the segmented scans over them). Input: events.
-- Storage order (no ORDER BY: the scan checks the order and sorts only when sessions are not already grouped).
SELECT e.rowid AS rid, e.session_id, e.seq,
       e.role = 'assistant' AS reply,
       e.role = 'assistant' AND e.n_tool_calls > 0 AS tool_round
FROM events e
WHERE e.rowid >= $lo AND e.rowid < $hi
