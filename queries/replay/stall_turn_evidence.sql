-- Stall replay, step 1c: per turn, the evidence that makes a wait or a first-reply plan a hand-off
-- (intent_signatures.toml [[background]] / [[approval_mode]]): the turn's first call that starts background work
-- (stall_bg_hits, from stall_background_match.sql), and its first event marked with a plan-approval mode (seq and
-- the entry's id; a round uses them when they came before it). Input: stall_bg_hits, stall_mode_hits, stall_scan.
CREATE OR REPLACE TEMP TABLE stall_turn_evidence AS
WITH bg AS (
    SELECT session_id, turn_id, min(seq) AS bg_seq, arg_min(id, seq::BIGINT * 1000 + ord) AS bg_id
    FROM stall_bg_hits GROUP BY ALL
), modes AS (   -- (the marked events, stall_mode_hits: queries/replay/stall_lookups.sql; their turn looked up in
               -- stall_scan by rowid)
    SELECT v.session_id, s.turn_id, min(v.seq) AS mode_seq, arg_min(v.id, v.seq::BIGINT * 1000 + v.ord) AS mode_id
    FROM stall_scan s JOIN stall_mode_hits v ON s.rid = v.rid
    GROUP BY ALL
)
SELECT * FROM bg FULL JOIN modes USING (session_id, turn_id);
