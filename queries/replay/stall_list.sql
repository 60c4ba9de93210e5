-- Stall rows, worst first (silent endings, exhausted, abandoned, then recovered / answered; newest first).
-- Parameters: $outcome, $kind (VARCHAR[] or NULL), $session (VARCHAR or NULL), $lim (INTEGER).
-- Input: stalls, turns_by_seq, stall_scope (sessions in scope).
SELECT s.session_id, s.turn_id, s.seq, s.event_id, s.ts, s.source_format AS harness, s.model, s.provider,
       s.round_kind, s.signature, s.finish_reason, s.stall_index, s.would_do, s.nudged, s.nudge_id,
       s.episode, s.episode_nudges, s.delivered, s.outcome, t.outcome AS turn_outcome, redact(s.excerpt) AS excerpt
FROM stalls s
JOIN turns_by_seq t USING (session_id, turn_id)
WHERE s.session_id IN (SELECT session_id FROM stall_scope)
  AND ($outcome::VARCHAR[] IS NULL OR list_contains($outcome::VARCHAR[], s.outcome))
  AND ($kind::VARCHAR[] IS NULL OR list_contains($kind::VARCHAR[], s.round_kind))
  AND ($session::VARCHAR IS NULL OR s.session_id = $session::VARCHAR)
ORDER BY CASE s.outcome WHEN 'silent_plan_as_answer' THEN 0 WHEN 'exhausted' THEN 1 WHEN 'abandoned' THEN 2
                        WHEN 'recovered' THEN 3 ELSE 4 END,
         s.delivered DESC, s.ts DESC NULLS LAST, s.session_id, s.seq
LIMIT $lim;
