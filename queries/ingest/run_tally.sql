-- Events, lines, files holding an event and rejected lines, written by one ingest run. Input: run_files (file,
-- start_line: where the run began). The events' two counts from one join (one scan of events.file).
SELECT w.n_events,
       (SELECT coalesce(sum(f.n_lines - (r.start_line - 1)), 0) FROM files f JOIN run_files r ON f.path = r.file),
       w.n_files,
       (SELECT count(*) FROM rejects x JOIN run_files r ON x.file = r.file AND x.line >= r.start_line)
FROM (SELECT count(*) AS n_events, count(DISTINCT e.file) AS n_files
      FROM events e JOIN run_files r ON e.file = r.file AND e.line >= r.start_line) w;
