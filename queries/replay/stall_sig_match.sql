-- Stall replay, step 2 (for each signature of stallscan/data/intent_signatures.toml): the distinct tails of
-- text-only replies that one signature matches, appended to stall_tail_matches for every signature that can match
-- a tail in one INSERT (stallscan.store.sql.union_all: one copy of this SELECT per signature, joined by UNION ALL).
-- A constant pattern per copy lets DuckDB compile each regex once. A miss fails before the regex where it can: a tail whose every reply is longer than
-- max_chars (each reply's own length is checked again in queries/replay/stall_rounds.sql), and a tail in plain
-- ASCII for a signature whose every match holds a non-ASCII character (stall_signatures.non_ascii, read from the
-- regex by stall_rules.needs_non_ascii). Parameters: $ord, $id, $kind, $regex (RE2), $max_chars (INTEGER or NULL).
-- Input: stall_tails, stall_signatures. Output: (tail, ord, id, kind) rows, appended to stall_tail_matches.
SELECT tail, $ord::INTEGER, $id::VARCHAR, $kind::VARCHAR
FROM stall_tails, (SELECT non_ascii FROM stall_signatures WHERE id = $id::VARCHAR) s
WHERE ($max_chars::INTEGER IS NULL OR min_chars <= $max_chars::INTEGER)
  -- (a CASE: the optimizer cannot push the regex below the join with s, so the skip comes first)
  AND CASE WHEN ascii AND s.non_ascii THEN false ELSE regexp_matches(tail, $regex::VARCHAR) END;
