-- Stall replay, step 1: events with their turn and round number, nudges after each round, and the
-- text-only replies the narrated-intent signatures are matched against (queries/replay/stall_sig_match.sql).
-- Input: events, stall_turn_starts (a row per event that starts a human turn), stall_prompts,
-- stall_settings (stallscan/stall_data.py installs the last two).
-- Order inside a session is (seq, event_id) everywhere, here and in the reference walk.

-- every event with its turn (human turn starts so far) and round number (assistant events so far)
CREATE OR REPLACE TEMP TABLE stall_ev AS
SELECT e.event_id, e.session_id, e.seq, e.role, e.kind, e.source_format, e.ts, e.ts_end, e.model,
       e.finish_reason, e.finish_norm, e.n_tool_calls, e.meta,
       -- trimmed text of messages only: tool results (often the bulk of the bytes) are never matched
       CASE WHEN e.role IN ('user', 'assistant') AND e.kind <> 'tool_result'
            THEN regexp_replace(e.text, '^[ \t\n\r]+|[ \t\n\r]+$', '', 'g') END AS stripped,
       sum(CASE WHEN s.event_id IS NOT NULL THEN 1 ELSE 0 END) OVER w AS turn_id,
       sum(CASE WHEN e.role = 'assistant' THEN 1 ELSE 0 END) OVER w AS round_no,
       s.event_id IS NOT NULL AS starts_turn
FROM events e LEFT JOIN stall_turn_starts s USING (event_id)
WINDOW w AS (PARTITION BY e.session_id ORDER BY e.seq, e.event_id ROWS UNBOUNDED PRECEDING);

-- after each round, before the next round of the same turn: the first known nudge, and whether the
-- person interrupted it (interrupt marker or a Codex turn_aborted event)
CREATE OR REPLACE TEMP TABLE stall_nudges AS
SELECT v.session_id, v.turn_id, v.round_no,
       arg_min(p.id, v.seq::BIGINT * 100000 + p.ord) FILTER (WHERE p.role = 'nudge') AS nudge_id,
       arg_min(p.reacts_to, v.seq::BIGINT * 100000 + p.ord) FILTER (WHERE p.role = 'nudge') AS nudge_reacts_to,
       count(DISTINCT v.event_id) FILTER (WHERE p.role = 'nudge') AS n_nudges,
       bool_or(p.role = 'interrupt' OR v.kind = 'turn_aborted') AS interrupted
FROM (SELECT * FROM stall_ev   -- only the rows that can be a nudge or an interrupt (before the join)
      WHERE round_no > 0 AND ((role = 'user' AND kind <> 'tool_result') OR kind = 'turn_aborted')) v
LEFT JOIN stall_prompts p ON p.role IN ('nudge', 'interrupt') AND v.role = 'user'
 AND CASE p.match WHEN 'exact' THEN v.stripped = p.text
                  WHEN 'prefix' THEN starts_with(v.stripped, p.text)
                  ELSE contains(v.stripped, p.text) END
WHERE (v.role = 'user' AND p.id IS NOT NULL) OR v.kind = 'turn_aborted'
GROUP BY ALL;

-- the tail of every text-only reply (signatures look at its last tail_chars characters)
CREATE OR REPLACE TEMP TABLE stall_text AS
SELECT event_id, length(stripped) AS n_chars,
       right(stripped, (SELECT value::INTEGER FROM stall_settings WHERE key = 'tail_chars')) AS tail
FROM stall_ev
WHERE role = 'assistant' AND n_tool_calls = 0 AND coalesce(stripped, '') <> '';

CREATE OR REPLACE TEMP TABLE stall_sig_matches (event_id VARCHAR, ord INTEGER, id VARCHAR, kind VARCHAR);
