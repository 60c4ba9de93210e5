-- Stall replay, step 1b: the tool calls one [[background]] entry of intent_signatures.toml matches (run once per
-- entry by stallscan/replay/stalls.py, so both regexes are constants). Input: stall_calls (stall_rounds_prep.sql).
-- Parameters: ord, id, tool (regex on the tool name), arguments (regex on the arguments, NULL: any).
INSERT INTO stall_bg_hits
SELECT session_id, turn_id, seq, $ord::INTEGER, $id
FROM stall_calls
WHERE regexp_matches(name, $tool) AND ($arguments::VARCHAR IS NULL OR regexp_matches(arguments, coalesce($arguments::VARCHAR, '')));
