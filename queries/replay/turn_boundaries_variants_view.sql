-- The view turn_boundary_variants over turn_boundaries_by_seq and turn_boundary_variants_marked
-- (queries/replay/turn_boundaries_variants.sql has the columns). Made after that file by
-- stallscan.replay.boundary_variants.replay_variants, except in an incremental run's scratch schema, where
-- nothing reads it (the database's own view stays as the full replay made it).
--
-- every row: a marked row as stored, any other as the router decided it (for such a row each variant's CASE
-- above gives the router's decided_by and decision, so boundary_error gives the router's error)
CREATE OR REPLACE VIEW turn_boundary_variants AS
SELECT b.event_id, b.session_id, b.seq,
       coalesce(m.marker_seen, false) AS marker_seen, m.marker_id, coalesce(m.known_automatic, false) AS known_automatic,
       CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.marker_decided_by END AS marker_decided_by,
       CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.marker_decision END AS marker_decision,
       CASE WHEN m.event_id IS NULL THEN b."error" ELSE m.marker_error END AS marker_error,
       CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.notif_decided_by END AS notif_decided_by,
       CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.notif_decision END AS notif_decision,
       CASE WHEN m.event_id IS NULL THEN b."error" ELSE m.notif_error END AS notif_error,
       CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.both_decided_by END AS both_decided_by,
       CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.both_decision END AS both_decision,
       CASE WHEN m.event_id IS NULL THEN b."error" ELSE m.both_error END AS both_error,
       CASE WHEN m.event_id IS NULL THEN b.threshold ELSE m.threshold END AS threshold
FROM turn_boundaries_by_seq b
LEFT JOIN turn_boundary_variants_marked m USING (event_id);
