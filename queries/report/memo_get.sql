-- The memoised report data for a key (stallscan.report.memo), or no row. Reads only.
-- Parameters: $key (VARCHAR).
SELECT data FROM report_memo WHERE key = $key;
