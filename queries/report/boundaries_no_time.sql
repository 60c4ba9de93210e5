-- Report "Turn boundaries": why records after a final reply had no trustworthy gap (decided_by no_time).
-- Input: turn_boundaries, events, scope_sessions.
SELECT CASE WHEN t.gap_raw_s < 0 THEN 'negative gap (clock skew)'
            WHEN t.ts IS NULL OR p.ts_end IS NULL THEN 'missing timestamp'
            WHEN t.ts_quality <> 'per_message' OR p.ts_quality <> 'per_message'
                 THEN 'timestamps ' || (CASE WHEN t.ts_quality <> 'per_message' THEN t.ts_quality ELSE p.ts_quality END)
            ELSE 'other' END AS reason,
       t.starts_request, count(*) AS n
FROM turn_boundaries t LEFT JOIN events p ON p.event_id = t.prev_event_id
SEMI JOIN scope_sessions s ON s.session_id = t.session_id
WHERE t.decided_by = 'no_time'
GROUP BY ALL ORDER BY n DESC, reason;
