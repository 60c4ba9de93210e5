-- Rows the stored sweep cells (table sweep_bins, stallscan.sweep.bins) are binned from: sweep_rows.sql's rows
-- (sweep_input.sql's rows and sweep_variants_input.sql's columns) for every session (no report scope: the
-- scope is applied when the cells are read), with the session's last model for grouping.
-- Inputs: the table macro sweep_rows() (turn_boundaries_narrow, turn_boundary_variants_marked), events
-- (resolved through the search path, so the same statement runs on a scratch schema holding only the changed
-- sessions).
SELECT r.* EXCLUDE (seq, decided_by, marker_decided_by, notif_decided_by, both_decided_by),
       -- (only whether the gap decided is read of each deciding step: booleans, not 4 x 1.25M strings to
       -- Arrow and back to numpy objects: at 10M generated events their numpy columns 0.25 -> 0.02 CPU s)
       r.decided_by = 'gap' AS vgr_gap, r.marker_decided_by = 'gap' AS marker_gap,
       r.notif_decided_by = 'gap' AS notif_gap, r.both_decided_by = 'gap' AS both_gap,
       m.model
FROM sweep_rows() r
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m ON m.session_id = r.session_id;
