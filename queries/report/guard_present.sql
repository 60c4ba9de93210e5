-- Report section "Guard": whether the report's scope holds a guard log's session at all (format
-- stallscan_guard), from the per-session summary rows (report/cells_sessions.sql). Without one, both of the
-- section's queries (guard_summary.sql, guard_after_block.sql) have no row to return, and are not run: each
-- scans `events` for the guard's records, and the second one's correlated look-ups are costly to plan (together
-- 10-15 CPU ms of a report after one new session, on a database with no guard log).
-- Input: scoped() (report/scoped_events.sql: session_cells of the sessions in scope_sessions).
SELECT count(*) > 0 FROM scoped('session_cells') WHERE source_format = 'stallscan_guard';
