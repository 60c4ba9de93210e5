-- The sessions a report looks at, by the shared filters (whole sessions: turn logic needs all of one).
-- Parameters: $since, $until (TIMESTAMPTZ or NULL), $harness, $model (VARCHAR[] or NULL).
CREATE OR REPLACE TEMP TABLE scope_sessions AS
SELECT session_id FROM events
GROUP BY session_id
HAVING ($since::TIMESTAMPTZ IS NULL OR max(ts_end) >= $since::TIMESTAMPTZ)
   AND ($until::TIMESTAMPTZ IS NULL OR min(ts) < $until::TIMESTAMPTZ)
   AND ($harness::VARCHAR[] IS NULL OR list_has_any($harness::VARCHAR[], list(DISTINCT source_format)))
   AND ($model::VARCHAR[] IS NULL OR list_has_any($model::VARCHAR[], list(DISTINCT model) FILTER (WHERE model IS NOT NULL)));

CREATE OR REPLACE TEMP VIEW scoped_events AS
SELECT e.* FROM events e SEMI JOIN scope_sessions s USING (session_id);
