-- Origin labels, step 2 (for each regex entry of the prompt library): the events that entry's pattern matches,
-- appended to ul_cand for every entry in one INSERT (stallscan.store.sql.union_all: one copy of this SELECT per
-- entry, joined by UNION ALL). A constant pattern per copy lets DuckDB compile each regex once.
-- Parameters: $rank (the entry), $pattern (RE2). Inputs: ul_events, ul_lib. Output: rows for ul_cand.
SELECT u.rid, l.rank, l.id, l.origin, l.starts_request, l.human_content
FROM ul_events u
JOIN ul_lib l ON l.pair = u.pair
WHERE l.rank = $rank::INTEGER
  AND (l.sidechain IS NULL OR l.sidechain = u.is_sidechain)
  AND (l.first IS NULL OR l.first = u.is_first)
  AND (l.after IS NULL OR contains(coalesce(u.prev_text, ''), l.after))
  AND (l.flag IS NULL OR json_extract_string(u.meta, '$."' || l.flag || '"') = 'true')
  AND regexp_matches(u.t, $pattern::VARCHAR);
