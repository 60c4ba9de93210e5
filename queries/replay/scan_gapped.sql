-- The sessions a batched scan (stallscan/replay/scan_batches.py, rowid ranges of $rows rows) would meet again after their
-- walk: those whose ranges (rowid // $rows) have a gap, e.g. a grown session whose new rows were appended at the
-- table's end (stallscan/replay/scan_apart.py). One row per such session: its id and its rows.
-- Run only after a batched scan raised Interleaved. Input: events.
SELECT session_id, sum(n) AS n
FROM (SELECT session_id, rowid // $rows AS r, count(*) AS n FROM events GROUP BY ALL)
GROUP BY session_id
HAVING count(*) < max(r) - min(r) + 1
ORDER BY session_id
