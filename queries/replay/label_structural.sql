-- The labels' structural rule for tool results, one statement of it for the two files that apply it:
-- user_labels_finish.sql labels a user / tool event that no library entry, queue copy or override decided as a
-- tool result (origin and origin_rule 'tool_result') when label_tool_result(role, kind) holds, and by its other
-- structural rules (origin_rule 'default_human' for a plain message) when it does not; turn_boundaries.sql
-- reads a label of either default shape from that same rule instead of joining it (stallscan.replay.labels
-- reserves the two ids, so no library entry gives a label either shape). Run before either file.
CREATE OR REPLACE TEMP MACRO label_tool_result(role, kind) AS role = 'tool' OR kind = 'tool_result';

-- The labels are stored as one INTEGER a row, user_labels_narrow.code (user_labels_finish.sql writes it, the view
-- user_labels_view.sql and turn_boundaries.sql read it):
--   bits 0-1  origin: 1 human, 2 automatic, 3 tool_result
--   bit 2     human_content
--   bit 3     not a request of its own (starts_request false)
--   bit 4     overridden by the user's labels file (origin_rule 'override:' || the rule)
--   bits 5-   the rule: its code in user_labels_rules (1 default_human, 2 tool_result, 3 + rank a library entry's
--             id, then three a format of label_rule_formats(): <format>.unpaired_context, .queued_copy,
--             .queued_input); 0: a rule no code stands for (a format not in the list), kept in the side table
--             user_labels_uncoded (user_labels_finish.sql)
-- So the two structural defaults are the codes 33 (human, default_human) and 67 (tool_result, tool_result).
CREATE OR REPLACE TEMP MACRO label_default_code(role, kind) AS CASE WHEN label_tool_result(role, kind) THEN 67 ELSE 33 END;

-- the formats whose structural rules have a code (the list of turn_boundaries.sql's source_format codes)
CREATE OR REPLACE TEMP MACRO label_rule_formats() AS
    ['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
     'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider', 'aider_input',
     'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc', 'phoenix_spans', 'litellm'];
