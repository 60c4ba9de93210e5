-- The rule variants' deciding step and call for a sweep row: a row the variants stored (marked: it has a row in
-- turn_boundary_variants_marked) is decided as that row says, any other as the router decides it
-- (queries/replay/turn_boundaries_variants.sql); no step -> '', undecided -> not human.
-- Used by sweep_rows.sql and sweep_variants_input.sql (which reads the view turn_boundaries: all that
-- `report --from-parquet` has; sweep_rows() reads turn_boundaries_narrow).
CREATE OR REPLACE TEMP MACRO sweep_pick_step(marked, variant, router) AS
    coalesce(CASE WHEN marked THEN variant ELSE router END, '');

CREATE OR REPLACE TEMP MACRO sweep_pick_human(marked, variant, router) AS
    coalesce(CASE WHEN marked THEN variant = 'human' ELSE router END, false);
