-- seq = 1..n again in every session of the temp table seq_fix (its rows are in several files, or a file of it
-- lost its rows): files of one session ordered by their first time, then file, line, part, as a fresh ingest
-- numbers them. Only rows whose seq changes are written (DuckDB updates rows its own transaction wrote at a
-- high price). Run after ingest_commit.sql (batch.py) and after remove_file.sql (plan.py).
UPDATE events SET seq = o.seq
FROM (SELECT event_id,
             row_number() OVER (PARTITION BY session_id ORDER BY file_first, file, line, part)::INTEGER AS seq
      FROM (SELECT event_id, session_id, file, line, part,
                   min(ts) OVER (PARTITION BY session_id, file) AS file_first
            FROM events WHERE session_id IN (SELECT session_id FROM seq_fix))) o
WHERE events.event_id = o.event_id AND events.seq <> o.seq;
