-- The notebook API's `events()`: rows of `events`, optionally one session / format / role, in session order.
-- Parameters: $session, $source_format, $role (VARCHAR or NULL = any), $lim (INTEGER: row cap).
SELECT *
FROM events
WHERE ($session::VARCHAR IS NULL OR session_id = $session::VARCHAR)
  AND ($source_format::VARCHAR IS NULL OR source_format = $source_format::VARCHAR)
  AND ($role::VARCHAR IS NULL OR role = $role::VARCHAR)
ORDER BY session_id, seq, event_id
LIMIT $lim;
