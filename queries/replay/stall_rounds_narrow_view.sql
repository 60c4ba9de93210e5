-- The view rounds_narrow: one row per reply, the columns of the view `rounds` but those read from the reply's own
-- event (queries/replay/stall_rounds_view.sql: its id, time, model, finish, text). rounds_core (queries/replay/stall_rounds.sql) with the sparse columns
-- put back (queries/replay/stall_rounds_side.sql), in the order and types of the table it replaced: the hit lists
-- by hit_key (none: empty lists, not vetoed), the nudges by the reply's seq (none: 0 nudges, not interrupted), the
-- turn's background / approval-mode evidence when it came before the reply.
CREATE OR REPLACE VIEW rounds_narrow AS
SELECT c.session_id, c.source_format, c.seq, c.turn_id, c.round_in_turn, c.provider, c.n_tool_calls, c.after_tool_round, c.round_kind, c.signature,
       coalesce(h.sig_hits, []::VARCHAR[]) AS sig_hits, coalesce(h.veto_hits, []::VARCHAR[]) AS veto_hits,
       coalesce(h.wait_hits, []::VARCHAR[]) AS wait_hits, coalesce(h.vetoed, false) AS vetoed,
       CASE WHEN ev.bg_seq < c.seq THEN ev.bg_id END AS background,
       CASE WHEN ev.mode_seq < c.seq THEN ev.mode_id END AS approval_mode,
       n.nudge_id, n.nudge_reacts_to, coalesce(n.n_nudges, 0)::INTEGER AS n_nudges,
       coalesce(n.interrupted, false) AS interrupted
FROM rounds_core c
LEFT JOIN rounds_hits h ON h.session_id = c.session_id AND h.hit_key = c.hit_key
LEFT JOIN rounds_nudges n ON n.session_id = c.session_id AND n.seq = c.seq
LEFT JOIN rounds_evidence ev ON ev.session_id = c.session_id AND ev.turn_id = c.turn_id;
