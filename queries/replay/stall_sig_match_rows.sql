-- Stall replay, step 2 for a handful of tails (stallscan.replay.stalls.ROW_MATCH_MAX_TAILS): the same rows as
-- queries/replay/stall_sig_match.sql run once per signature, in one statement over the (tail, signature) pairs,
-- the regex read from stall_signatures. DuckDB compiles a regex that is not a constant once per row it reaches;
-- a constant one once at bind, again in the optimizer's regex rule and again in each thread's local state, and
-- the 31-copy UNION ALL is planned copy by copy: for one to three tails the pairs cost less (one tail: 15 against
-- 52 CPU ms, measured by the stmt20 section of docs/benchmarks.md). The skips are the same, per pair: a tail whose
-- every reply is longer than max_chars, a tail in plain ASCII for a signature whose every match holds a
-- non-ASCII character (the CASE keeps the regex off those pairs).
-- Input: stall_tails, stall_signatures. Output: (tail, ord, id, kind) rows, appended to stall_tail_matches.
INSERT INTO stall_tail_matches
SELECT t.tail, s.ord, s.id, s.kind
FROM stall_tails t, stall_signatures s
WHERE (s.max_chars IS NULL OR t.min_chars <= s.max_chars)
  AND CASE WHEN t.ascii AND s.non_ascii THEN false ELSE regexp_matches(t.tail, s.regex) END;
