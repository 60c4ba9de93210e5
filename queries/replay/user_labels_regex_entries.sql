-- Origin labels: the prompt library's regex entries (rank, pattern), and how many (event, entry) pairs of ul_events
-- and ul_lib share a (format, kind) pair for them: stallscan.replay.labels picks the regex step's form by it
-- (user_labels_regex_rows.sql for a few pairs, else user_labels_regex.sql once per entry). Inputs: ul_events, ul_lib.
SELECT DISTINCT rank, text,
       (SELECT count(*) FROM ul_events u JOIN ul_lib r ON r.pair = u.pair WHERE r.match = 'regex') AS pairs
FROM ul_lib WHERE match = 'regex' ORDER BY rank;
