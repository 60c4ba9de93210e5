-- The previous reply of every turn_boundaries row, as turn_boundaries_variants.sql's marks read it (temp view
-- tbv_prev: event_id, session_id, seq, prev_seq), from the stored table turn_boundaries_narrow: the replay's own
-- path (stallscan.replay.boundaries), where that table is there. These four columns are stored as they are, so
-- the view turn_boundaries_by_seq, which computes the decisions beside them, is not bound for them (about 6 CPU ms
-- of planning a report after one new session: it was named twice). A connection that holds turn_boundaries alone
-- (a parquet export's tables) reads the view instead: turn_boundaries_variants_prev_view.sql.
CREATE OR REPLACE TEMP VIEW tbv_prev AS
SELECT event_id, session_id, seq, prev_seq FROM turn_boundaries_narrow;
