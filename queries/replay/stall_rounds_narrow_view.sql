-- The view rounds_narrow: one row per reply, the columns of the view `rounds` but those read from the reply's own
-- event (queries/replay/stall_rounds_view.sql: its id, time, model, finish, text). rounds_core (queries/replay/stall_rounds.sql) with the sparse columns
-- put back (queries/replay/stall_rounds_side.sql) and its codes as the strings they stand for (the lists of
-- queries/replay/stall_rounds.sql; uncoded: the signature and any value no list holds), in the order and types of
-- the table it replaced: the hit lists
-- by hit_key (none: empty lists, not vetoed), the nudges by the reply's seq (none: 0 nudges, not interrupted), the
-- turn's background / approval-mode evidence when it came before the reply.
CREATE OR REPLACE VIEW rounds_narrow AS
SELECT c.session_id,
       coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                 'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                 'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                 'phoenix_spans', 'litellm'][nullif((c.codes >> 8) & 255, 0)], c.uncoded ->> 'source_format')
           AS source_format,
       c.seq, c.turn_id, c.round_in_turn,
       coalesce(['unknown', 'anthropic', 'openai', 'google', 'qwen', 'nvidia', 'deepseek', 'meta'][
                    nullif((c.codes >> 16) & 255, 0)], c.uncoded ->> 'provider') AS provider,
       c.n_tool_calls, (c.codes >> 24) & 1 = 1 AS after_tool_round,
       coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty', 'truncated',
                 'cancelled', 'failed'][nullif(c.codes & 255, 0)], c.uncoded ->> 'round_kind') AS round_kind,
       c.uncoded ->> 'signature' AS signature,
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
