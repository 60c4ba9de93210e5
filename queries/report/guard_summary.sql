-- Report section "Guard": what the live guard decided (its log, ingested as format stallscan_guard).
-- Input: scoped_events. One row per (mode, decision, verdict, reason) with counts and latency figures.
SELECT meta ->> 'mode' AS mode, meta ->> 'decision' AS decision, meta ->> 'verdict' AS verdict,
       meta ->> 'reason' AS reason, count(*) AS n,
       count(DISTINCT meta ->> 'session') AS sessions,
       quantile_cont(TRY_CAST(meta ->> 'latency_ms' AS DOUBLE), 0.5) AS latency_median_ms,
       max(TRY_CAST(meta ->> 'latency_ms' AS DOUBLE)) AS latency_max_ms
FROM scoped_events
WHERE source_format = 'stallscan_guard' AND kind = 'guard_decision'
GROUP BY ALL
ORDER BY n DESC, mode, decision, verdict, reason;
