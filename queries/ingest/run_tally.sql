-- Events, lines and files holding an event, written by one ingest run. Input: run_files (file, start_line:
-- where the run began).
SELECT (SELECT count(*) FROM events e JOIN run_files r ON e.file = r.file AND e.line >= r.start_line),
       (SELECT coalesce(sum(f.n_lines - (r.start_line - 1)), 0) FROM files f JOIN run_files r ON f.path = r.file),
       (SELECT count(DISTINCT e.file) FROM events e JOIN run_files r ON e.file = r.file AND e.line >= r.start_line);
