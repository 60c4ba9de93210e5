-- Turn starts without the turn-boundary truth (fallback while stallscan.labels is absent):
-- a user-role message or queued input with text that is no known automatic prompt or nudge
-- (stall_prompts), not isMeta and not a compaction summary. Input: events, stall_prompts.
CREATE OR REPLACE TEMP TABLE stall_turn_starts AS
SELECT e.event_id
FROM events e
WHERE e.role = 'user' AND e.kind IN ('message', 'queued_input')
  AND regexp_replace(coalesce(e.text, ''), '^[ \t\n\r]+|[ \t\n\r]+$', '', 'g') <> ''
  AND NOT coalesce(try_cast(e.meta ->> 'isMeta' AS BOOLEAN), false)
  AND NOT coalesce(try_cast(e.meta ->> 'isCompactSummary' AS BOOLEAN), false)
  AND NOT EXISTS (
      SELECT 1 FROM stall_prompts p
      WHERE p.role IN ('nudge', 'automatic', 'interrupt')
        AND CASE p.match
              WHEN 'exact' THEN regexp_replace(e.text, '^[ \t\n\r]+|[ \t\n\r]+$', '', 'g') = p.text
              WHEN 'prefix' THEN starts_with(regexp_replace(e.text, '^[ \t\n\r]+|[ \t\n\r]+$', '', 'g'), p.text)
              ELSE contains(e.text, p.text) END);
