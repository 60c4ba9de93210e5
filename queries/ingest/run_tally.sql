-- Events, lines, files holding an event, rejected lines and the skipped lines per kind ([(kind, n)], in no
-- order), written by one ingest run. Input: run_files (file, start_line: where the run began). The events' two
-- counts from one join (one scan of events.file); the skipped kinds in the same statement (one planning).
SELECT w.n_events,
       (SELECT coalesce(sum(f.n_lines - (r.start_line - 1)), 0) FROM files f JOIN run_files r ON f.path = r.file),
       w.n_files,
       (SELECT count(*) FROM rejects x JOIN run_files r ON x.file = r.file AND x.line >= r.start_line),
       (SELECT coalesce(list((kind, n)), []) FROM (SELECT s.kind, count(*) AS n FROM skipped s JOIN run_files r
                                                   ON s.file = r.file AND s.line >= r.start_line GROUP BY ALL))
FROM (SELECT count(*) AS n_events, count(DISTINCT e.file) AS n_files
      FROM events e JOIN run_files r ON e.file = r.file AND e.line >= r.start_line) w;
