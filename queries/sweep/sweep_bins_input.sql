-- Rows the stored sweep cells (table sweep_bins, stallscan.sweep.bins) are binned from: sweep_rows.sql's rows
-- (sweep_input.sql's rows and sweep_variants_input.sql's columns) for every session (no report scope: the
-- scope is applied when the cells are read), with the session's last model for grouping.
-- Inputs: the table macro sweep_rows() (turn_boundaries_narrow, turn_boundary_variants_marked), events
-- (resolved through the search path, so the same statement runs on a scratch schema holding only the changed
-- sessions).
SELECT r.* EXCLUDE (seq), m.model
FROM sweep_rows() r
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m ON m.session_id = r.session_id;
