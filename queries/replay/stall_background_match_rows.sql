-- Stall replay, step 1b for a handful of tool calls (stallscan.replay.stalls.BG_ROW_MATCH_MAX_CALLS): the same rows
-- as queries/replay/stall_background_match.sql run once per [[background]] entry, in one statement over the
-- (call, entry) pairs, the regexes read from stall_background (compiled once per pair they reach, where the
-- per-entry statements compile each as a constant: for a few calls one statement planned, not one per entry).
-- stall_turn_evidence.sql keeps each turn's first by (seq, ord): the order the rows are appended in does not count.
-- Input: stall_calls (stall_rounds_prep.sql), stall_background. Output: appended to stall_bg_hits.
INSERT INTO stall_bg_hits
SELECT c.session_id, c.turn_id, c.seq, b.ord, b.id
FROM stall_calls c, stall_background b
WHERE regexp_matches(c.name, b.tool) AND (b.arguments IS NULL OR regexp_matches(c.arguments, coalesce(b.arguments, '')));
