-- The view `turns_by_seq`: turns_core (queries/replay/stall_turns.sql) with its codes as the strings they stand for,
-- the turn's start and delivered reply as their seq in the session (start_seq: turns 1 on; delivered_seq: NULL
-- when the turn has no reply). Every reader that reads neither event id reads it (no join with events); the view
-- `turns` (stall_turns_view.sql) adds the two ids. Plain SQL (no stallscan macro), so the view reads in any DuckDB
-- that opens the database. The codes are a byte each of `codes` (0: NULL, or a value no list holds, then read from
-- `uncoded`): source_format in bits 0-7, provider 8-15, delivered_round_kind 16-23, delivered_finish 24-31, outcome
-- 32-39; the lists are stall_turns.sql's (tests/functional/test_rounds_codes.py holds them equal).
CREATE OR REPLACE VIEW turns_by_seq AS
SELECT session_id, turn_id,
       coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                 'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                 'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                 'phoenix_spans', 'litellm'][nullif(codes & 255, 0)], uncoded ->> 'source_format') AS source_format,
       model,
       coalesce(['unknown', 'anthropic', 'openai', 'google', 'qwen', 'nvidia', 'deepseek', 'meta'][
                    nullif((codes >> 8) & 255, 0)], uncoded ->> 'provider') AS provider,
       start_seq, end_seq, ts_start, ts_end, n_rounds, n_tool_calls, n_stalls, n_nudged, delivered_seq,
       coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty', 'truncated',
                 'cancelled', 'failed'][nullif((codes >> 16) & 255, 0)], uncoded ->> 'delivered_round_kind')
           AS delivered_round_kind,
       coalesce(['stop', 'tool_calls', 'length', 'end_turn', 'tool_use', 'max_tokens', 'stop_sequence',
                 'content_filter', 'STOP', 'MAX_TOKENS'][nullif((codes >> 24) & 255, 0)], uncoded ->> 'delivered_finish')
           AS delivered_finish,
       coalesce(['answered', 'open', 'no_reply', 'silent_plan_as_answer', 'exhausted', 'abandoned', 'recovered',
                 'empty', 'truncated', 'cancelled', 'failed'][nullif((codes >> 32) & 255, 0)], uncoded ->> 'outcome')
           AS outcome
FROM turns_core;
