-- The turn-boundary cells summed over every session (table boundary_totals, stallscan.report.summary_cells):
-- boundary_cells without its session column, one row per combination of what the "Turn boundaries" section
-- counts by, n = the records of every session that share it. A report over every session (no --since /
-- --until / --harness / --model) reads these rows (report/scoped_boundary_cells.sql) instead of summing the
-- cells of every session on each report (126k cells at 1M events, ~10 ms a query). Every n is a sum of
-- per-session counts, so after an ingest the changed sessions' old part is subtracted and their new part
-- added: the rows equal a full build's (a combination whose n comes to 0 is dropped, as a full build has none).
-- Input: boundary_cells (main); cells_changed (session_id: the sessions summarised again). Run by
-- summary_cells._refresh in the cells' transaction: statement 0 for a full build; for an incremental one 1
-- (their old part) before the changed sessions' cells are deleted, 2 (old part out, new part in) and 3 after
-- their new cells are inserted.
CREATE OR REPLACE TABLE main.boundary_totals AS
SELECT * EXCLUDE (session_id, n), sum(n)::BIGINT AS n FROM main.boundary_cells GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE cells_delta AS
SELECT * EXCLUDE (session_id, n), -sum(n)::BIGINT AS n
FROM main.boundary_cells WHERE session_id IN (SELECT session_id FROM cells_changed) GROUP BY ALL;

CREATE OR REPLACE TABLE main.boundary_totals AS
SELECT * EXCLUDE (n), sum(n)::BIGINT AS n
FROM (SELECT * FROM main.boundary_totals
      UNION ALL BY NAME SELECT * FROM cells_delta
      UNION ALL BY NAME SELECT * EXCLUDE (session_id) FROM main.boundary_cells
                        WHERE session_id IN (SELECT session_id FROM cells_changed))
GROUP BY ALL HAVING sum(n) <> 0;

DROP TABLE cells_delta;
