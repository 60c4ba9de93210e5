-- The excerpt (whitespace folded, secrets redacted, 160 characters) of each of the events a timeline shows.
-- Parameters: $sessions (VARCHAR[]: their sessions, which narrow the scan), $events (VARCHAR[]: event ids).
-- Input: events.
SELECT event_id, left(redact(regexp_replace(coalesce(text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM events
WHERE list_contains($sessions::VARCHAR[], session_id) AND list_contains($events::VARCHAR[], event_id);
