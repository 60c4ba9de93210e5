-- The turn-boundary rows the boundary cells summarise (report/cells_boundaries.sql, report/cells_misreads.sql),
-- as the table macro cells_boundary_rows(): the view turn_boundaries_by_seq (turn_boundaries without the join that
-- finds prev_event_id, queries/replay/turn_boundaries_view.sql) computes each row's decisions and errors,
-- and planning it costs some 5 CPU ms a statement that names it (its CASE chains are inlined where a
-- column is read), against 1-2 ms of reading a few hundred rows. An incremental refresh (the sessions in
-- cells_changed) reads the view once, into the temp table cells_boundary_tb, and both queries read that; a full
-- build, or one over more than summary_cells.ROWS_MAX_SESSIONS sessions, reads the view itself (no copy of every
-- row; the queries narrow it to cells_changed). Run by stallscan.report.summary_cells._refresh:
-- statement 0 for a full build, 1 and 2 for an incremental one, before the cells' statements.
CREATE OR REPLACE TEMP MACRO cells_boundary_rows() AS TABLE SELECT * FROM turn_boundaries_by_seq;

CREATE OR REPLACE TEMP TABLE cells_boundary_tb AS
SELECT * FROM turn_boundaries_by_seq WHERE session_id IN (SELECT session_id FROM cells_changed);

CREATE OR REPLACE TEMP MACRO cells_boundary_rows() AS TABLE SELECT * FROM cells_boundary_tb;
