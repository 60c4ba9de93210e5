-- Table macro scoped_boundary_cells(): the turn-boundary cells of the report's scope without their session
-- column, what the "Turn boundaries" section and the tool results the sweep leaves out sum n over. Over every
-- session (the variable scope_whole, set by report/scoped_events.sql) the cells already summed over the
-- sessions (boundary_totals, report/cells_boundary_totals.sql: a few hundred rows), else the cells of the
-- sessions in scope_sessions. The variable is read when a query binds the macro, so the branch not taken
-- is planned away. Made after the cells' refresh (stallscan.report.summary_cells.refresh_boundaries): the
-- star is expanded when the macro is made, so both tables must exist then.
CREATE OR REPLACE TEMP MACRO scoped_boundary_cells() AS TABLE
SELECT * EXCLUDE (session_id) FROM main.boundary_cells SEMI JOIN scope_sessions USING (session_id)
WHERE NOT coalesce(getvariable('scope_whole'), false)
UNION ALL BY NAME
SELECT * FROM main.boundary_totals WHERE coalesce(getvariable('scope_whole'), false);
