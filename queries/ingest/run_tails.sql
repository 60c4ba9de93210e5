-- run_tails: per file this run reads on in a next chunk from a held tail (hold_tail.sql), the totals of its
-- written rows, which are exactly its rows before the next chunk's start line (the held rows were never
-- written, so the next chunk deletes none). file_stats.sql and hold_tail.sql add a next chunk's own rows
-- to them instead of scanning every earlier chunk's rows again. A file not held drops out (its next read
-- deletes rows, or it is done). Input: tx_files, batch_stats (file_stats.sql). A temp table of the run.
DELETE FROM run_tails WHERE file IN (SELECT file FROM tx_files);

INSERT INTO run_tails
SELECT file, n_event_lines, n_events, n_skipped, n_rejects, max_last, max_last_at, last_assist
FROM batch_stats WHERE held;
