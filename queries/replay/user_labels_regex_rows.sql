-- Origin labels, step 2 for a few (event, entry) pairs (stallscan.replay.labels.ROW_MATCH_PER_ENTRY): the same rows
-- as queries/replay/user_labels_regex.sql run once per regex entry, in one statement over the pairs, the pattern
-- read from ul_lib. DuckDB compiles a pattern that is not a constant once per row it reaches (the CASE keeps it off
-- the pairs whose conditions fail); a constant one at bind, again in the optimizer's regex rule and in each
-- thread's local state, and every copy of the UNION ALL is planned. Inputs: ul_events, ul_lib. Output: rows of ul_cand.
INSERT INTO ul_cand
SELECT u.rid, l.rank, l.id, l.origin, l.starts_request, l.human_content
FROM ul_events u
JOIN ul_lib l ON l.pair = u.pair
WHERE l.match = 'regex'
  AND CASE WHEN (l.sidechain IS NULL OR l.sidechain = u.is_sidechain)
                AND (l.first IS NULL OR l.first = u.is_first)
                AND (l.after IS NULL OR contains(coalesce(u.prev_text, ''), l.after))
                AND (l.flag IS NULL OR json_extract_string(u.meta, '$."' || l.flag || '"') = 'true')
           THEN regexp_matches(u.t, l.text) ELSE false END;
