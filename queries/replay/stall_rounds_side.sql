-- Stall replay, step 3b: the rounds' columns that are empty on most replies, stored only where they are set (the view
-- rounds_narrow, queries/replay/stall_rounds_narrow_view.sql, joins them back to rounds_core). Every table keeps
-- session_id, so an incremental replay replaces a changed session's rows in each.
-- Input: rounds_core, stall_sig_hits (queries/replay/stall_rounds.sql), stall_nudges, stall_turn_evidence, events.

-- the signature hit lists of each hit_key a session's replies have (most replies share a few: short finals, canned
-- sentences; a reply without any hit has hit_key NULL)
CREATE OR REPLACE TABLE rounds_hits AS
SELECT k.session_id, k.hit_key, h.sig_hits, h.veto_hits, h.wait_hits, h.vetoed
FROM (SELECT DISTINCT session_id, hit_key FROM rounds_core WHERE hit_key IS NOT NULL) k
JOIN stall_sig_hits h USING (hit_key);

-- the nudges after a round and whether the person interrupted it, by the round's (session_id, seq)
CREATE OR REPLACE TABLE rounds_nudges AS
SELECT e.session_id, e.seq, n.nudge_id, n.nudge_reacts_to, n.n_nudges::INTEGER AS n_nudges, n.interrupted
FROM stall_nudges n JOIN events e ON e.rowid = n.rid
WHERE e.role = 'assistant';

-- per turn: the first call that starts background work and the first plan-approval mode marker (seq and entry id);
-- a round shows them when they came before it
CREATE OR REPLACE TABLE rounds_evidence AS
SELECT session_id, turn_id::INTEGER AS turn_id, bg_seq, bg_id, mode_seq, mode_id FROM stall_turn_evidence;
