-- The sessions a report looks at, by the shared filters (whole sessions: turn logic needs all of one),
-- from the per-session summary rows (report/cells_sessions.sql), not the events.
-- Parameters: $since, $until (TIMESTAMPTZ or NULL), $harness, $model (VARCHAR[] or NULL).
CREATE OR REPLACE TEMP TABLE scope_sessions AS
SELECT session_id FROM session_cells
GROUP BY session_id
HAVING ($since::TIMESTAMPTZ IS NULL OR max(last_ts) >= $since::TIMESTAMPTZ)
   AND ($until::TIMESTAMPTZ IS NULL OR min(first_ts) < $until::TIMESTAMPTZ)
   AND ($harness::VARCHAR[] IS NULL OR list_has_any($harness::VARCHAR[], list(DISTINCT source_format)))
   AND ($model::VARCHAR[] IS NULL OR list_has_any($model::VARCHAR[], flatten(list(models))));

-- whether the scope is every session (no filter given): report/scoped_boundary_cells.sql then reads the cells
-- summed over the sessions (stallscan.report.build.scope sets it false for tables given as they are)
SET VARIABLE scope_whole = $since::TIMESTAMPTZ IS NULL AND $until::TIMESTAMPTZ IS NULL AND $harness::VARCHAR[] IS NULL
                           AND $model::VARCHAR[] IS NULL;

CREATE OR REPLACE TEMP VIEW scoped_events AS
SELECT e.* FROM events e SEMI JOIN scope_sessions s USING (session_id);

-- Table macro scoped(t): the rows of table t (a per-session summary table: it has a session_id column) of the
-- sessions in scope_sessions. Over every session (scope_whole) the table as it is, without the semi join on
-- scope_sessions (its hash table of every session built and probed by each query that reads a summary table:
-- 3-5 CPU ms a query at 1M events); the variable is read when a query binds the macro, so the branch not taken is
-- planned away (as in report/scoped_boundary_cells.sql).
CREATE OR REPLACE TEMP MACRO scoped(t) AS TABLE
SELECT * FROM query_table(t) WHERE coalesce(getvariable('scope_whole'), false)
UNION ALL
SELECT * FROM query_table(t) SEMI JOIN scope_sessions USING (session_id)
WHERE NOT coalesce(getvariable('scope_whole'), false);
