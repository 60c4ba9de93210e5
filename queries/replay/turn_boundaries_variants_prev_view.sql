-- The previous reply of every turn_boundaries row, as turn_boundaries_variants.sql's marks read it (temp view
-- tbv_prev: event_id, session_id, seq, prev_seq), from turn_boundaries_by_seq: for a connection without the
-- stored table turn_boundaries_narrow (a parquet export's tables: stallscan.sweep.variants); the replay's own path
-- reads that table (turn_boundaries_variants_prev.sql).
CREATE OR REPLACE TEMP VIEW tbv_prev AS
SELECT event_id, session_id, seq, prev_seq FROM turn_boundaries_by_seq;
