-- The rule variants' decisions for the rows of sweep/sweep_input.sql, in the same order (same filter, same
-- ORDER BY): for each variant (marker, notif, both) the step that decided and whether it called the event human.
-- Inputs: the table macro sweep_rows() (sweep_rows.sql: turn_boundaries_narrow and
-- turn_boundary_variants_marked, stallscan.replay.boundary_variants), scope_sessions.
SELECT session_id, marker_decided_by, marker_decided_human, notif_decided_by, notif_decided_human,
       both_decided_by, both_decided_human
FROM sweep_rows()
WHERE session_id IN (SELECT session_id FROM scope_sessions)
ORDER BY session_id, seq;
