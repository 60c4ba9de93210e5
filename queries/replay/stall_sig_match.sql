-- Stall replay, step 2 (once per signature of stallscan/data/intent_signatures.toml): record the
-- text-only replies whose tail matches one signature. A constant pattern per statement lets DuckDB
-- compile the regex once. Parameters: $ord, $id, $kind, $regex (RE2), $max_chars (INTEGER or NULL).
-- Input: stall_text. Output: rows appended to stall_sig_matches.
INSERT INTO stall_sig_matches
SELECT rid, $ord::INTEGER, $id::VARCHAR, $kind::VARCHAR
FROM stall_text
WHERE ($max_chars::INTEGER IS NULL OR n_chars <= $max_chars::INTEGER)
  AND regexp_matches(tail, $regex::VARCHAR);
