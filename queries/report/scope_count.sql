-- How many events the report's shared filters keep (0: no report), straight from `events`, writing
-- nothing: it answers on a read-only connection before anything is derived. The same filters as
-- report/scoped_events.sql, which reads them from the per-session summary rows.
-- Parameters: $since, $until (TIMESTAMPTZ or NULL), $harness, $model (VARCHAR[] or NULL).
SELECT count(*) FROM events
WHERE session_id IN (
    SELECT session_id FROM events
    GROUP BY session_id
    HAVING ($since::TIMESTAMPTZ IS NULL OR max(ts_end) >= $since::TIMESTAMPTZ)
       AND ($until::TIMESTAMPTZ IS NULL OR min(ts) < $until::TIMESTAMPTZ)
       AND ($harness::VARCHAR[] IS NULL OR list_has_any($harness::VARCHAR[], list(DISTINCT source_format)))
       AND ($model::VARCHAR[] IS NULL
            OR list_has_any($model::VARCHAR[], list(DISTINCT model) FILTER (WHERE model IS NOT NULL)))
);
