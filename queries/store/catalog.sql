-- The tables and views a user can query in the open database (stallscan sql's hint lists them):
-- stored tables and views of the current database, DuckDB's own catalog views left out.
-- Columns: kind ('table' | 'view'), name. Input: duckdb_tables(), duckdb_views().
SELECT 'table' AS kind, table_name AS name
FROM duckdb_tables()
WHERE database_name = current_database() AND NOT internal AND NOT temporary
UNION ALL
SELECT 'view', view_name
FROM duckdb_views()
WHERE database_name = current_database() AND NOT internal AND NOT temporary
ORDER BY kind, name;
