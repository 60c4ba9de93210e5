-- The one definition of "misread turns": router errors (auto_as_human / human_as_auto) over the user-role
-- records that start a model request, tool results included; split into prompts (no tool results: the
-- population `sweep` scores) and tool results. Input: turn_boundaries (whole database).
SELECT count(*) FILTER (WHERE starts_request) AS records,
       count(*) FILTER (WHERE error IN ('auto_as_human', 'human_as_auto')) AS misread,
       count(*) FILTER (WHERE error IN ('auto_as_human', 'human_as_auto') AND origin <> 'tool_result') AS prompts,
       count(*) FILTER (WHERE error IN ('auto_as_human', 'human_as_auto') AND origin = 'tool_result') AS tool_results
FROM turn_boundaries_by_seq;
