-- The view `rounds`: rounds_narrow (queries/replay/stall_rounds.sql) with each reply's event_id, ts, model,
-- finish_reason, finish_eff, text_chars and excerpt read or computed from its own event as queries/replay/stall_rounds_prep.sql
-- computes them for the replay (stall_atext), in the order of the table the view replaced. A reply is found by (session_id, seq): unique inside a session
-- (ingest numbers it) and, unlike the events' rowid, kept when other events are removed (a checkpoint after a
-- delete renumbers the rowids after the deleted rows). The excerpt is the reply's text with leading/trailing
-- [ \t\n\r] removed, its last 239 characters after '…' when longer than 240; text_chars that text's length;
-- finish_eff the normalised finish, else the Codex phase's (commentary: tool_calls, final_answer: stop).
CREATE OR REPLACE VIEW rounds AS
SELECT e.event_id, r.session_id, r.source_format, r.seq, e.ts, r.turn_id, r.round_in_turn, e.model, r.provider,
       e.finish_reason, e.finish_eff, r.n_tool_calls, length(e.stripped) AS text_chars, r.after_tool_round, r.round_kind, r.signature,
       r.sig_hits, r.veto_hits, r.wait_hits, r.vetoed, r.background, r.approval_mode, r.nudge_id, r.nudge_reacts_to,
       r.n_nudges, r.interrupted,
       CASE WHEN length(e.stripped) <= 240 THEN e.stripped ELSE '…' || right(e.stripped, 239) END AS excerpt
FROM rounds_narrow r
JOIN (SELECT session_id, seq, event_id, ts, model, finish_reason,
             coalesce(finish_norm, CASE meta ->> 'phase' WHEN 'commentary' THEN 'tool_calls'
                                                       WHEN 'final_answer' THEN 'stop' END) AS finish_eff,
             trim(text, chr(32) || chr(9) || chr(10) || chr(13)) AS stripped
      FROM events WHERE role = 'assistant') e
  ON e.session_id = r.session_id AND e.seq = r.seq;
