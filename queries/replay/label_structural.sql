-- The labels' structural rule for tool results, one statement of it for the two files that apply it:
-- user_labels_finish.sql labels a user / tool event that no library entry, queue copy or override decided as a
-- tool result (origin and origin_rule 'tool_result') when label_tool_result(role, kind) holds, and by its other
-- structural rules (origin_rule 'default_human' for a plain message) when it does not; turn_boundaries.sql
-- reads a label of either default shape from that same rule instead of joining it (stallscan.replay.labels
-- reserves the two ids, so no library entry gives a label either shape). Run before either file.
CREATE OR REPLACE TEMP MACRO label_tool_result(role, kind) AS role = 'tool' OR kind = 'tool_result';
