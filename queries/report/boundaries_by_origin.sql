-- Report "Turn boundaries": user-role events (and tool results) by harness and origin, in scope.
-- Input: turn_boundaries, scope_sessions.
SELECT source_format AS harness, origin,
       count(*) AS records,
       count(*) FILTER (WHERE starts_request) AS requests,
       count(*) FILTER (WHERE NOT starts_request) AS not_requests,
       count(*) FILTER (WHERE human_content) AS human_content
FROM turn_boundaries SEMI JOIN scope_sessions USING (session_id)
GROUP BY ALL ORDER BY harness, origin;
