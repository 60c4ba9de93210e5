-- Files this run read (input: run_files) that gave no event although they have lines: every line was
-- skipped or rejected. Asked only when --input-format forced the format (a forced format that matches nothing).
SELECT f.path
FROM files f JOIN run_files r ON f.path = r.file
WHERE f.n_lines > 0 AND coalesce(f.n_events, 0) = 0
ORDER BY f.path;
