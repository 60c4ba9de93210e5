-- Stall replay, step 1c: per turn, the evidence that makes a wait or a first-reply plan a hand-off
-- (intent_signatures.toml [[background]] / [[approval_mode]]): the turn's first call that starts background work
-- (stall_bg_hits, from stall_background_match.sql), and its first event marked with a plan-approval mode (seq and
-- the entry's id; a round uses them when they came before it). Input: stall_bg_hits, events, stall_scan,
-- stall_approval_modes.
CREATE OR REPLACE TEMP TABLE stall_turn_evidence AS
WITH bg AS (
    SELECT session_id, turn_id, min(seq) AS bg_seq, arg_min(id, seq::BIGINT * 1000 + ord) AS bg_id
    FROM stall_bg_hits GROUP BY ALL
), modes AS (   -- (the marked events found in `events` first, their turn looked up in stall_scan by rowid; meta is
               -- parsed only when its text holds the key: ingest writes every meta key as a plain ASCII literal, never
               -- escaped; at 10M generated events 0.76-0.88 against 0.11-0.16 CPU s)
    SELECT v.session_id, s.turn_id, min(v.seq) AS mode_seq, arg_min(v.id, v.seq::BIGINT * 1000 + v.ord) AS mode_id
    FROM stall_scan s
    JOIN (SELECT e.rowid AS rid, e.session_id, e.seq, m.id, m.ord
          FROM events e
          JOIN stall_approval_modes m ON contains(e.meta, m.meta_key)
           AND json_extract_string(e.meta, '$."' || m.meta_key || '"') = m.value
          WHERE e.role <> 'assistant' AND e.meta IS NOT NULL) v ON s.rid = v.rid
    GROUP BY ALL
)
SELECT * FROM bg FULL JOIN modes USING (session_id, turn_id);
