-- Stall replay, step 4 in an incremental run whose changed sessions hold no stall (queries/replay/scan_stall_walk_rows.sql
-- counted no round to walk; stallscan.replay.stalls._compute): the temp table stall_walk empty, with the columns, order
-- and types queries/replay/stall_replay.sql's first statement gives it (tests/unit/test_stall_replay_none.py holds them
-- equal), without planning that statement (about 7 CPU ms; the walk's scan is not run either). `stalls` is then made
-- from it by stall_replay.sql's last statement, and queries/replay/stall_turns.sql reads it as always.
-- Input: rounds_core (its columns but the codes). Output: stall_walk (no row).
CREATE OR REPLACE TEMP TABLE stall_walk AS
SELECT NULL::VARCHAR AS event_id, NULL::TIMESTAMPTZ AS ts, NULL::VARCHAR AS model, NULL::VARCHAR AS finish_reason,
       r.* EXCLUDE (codes, uncoded),
       NULL::VARCHAR AS source_format, NULL::VARCHAR AS provider, NULL::VARCHAR AS round_kind,
       NULL::VARCHAR AS signature, NULL::VARCHAR AS nudge_id, NULL::VARCHAR AS excerpt, NULL::BOOLEAN AS is_stall,
       NULL::VARCHAR AS family, NULL::INTEGER AS brk, NULL::BOOLEAN AS delivered, NULL::INTEGER AS episode,
       NULL::INTEGER AS stall_index, NULL::VARCHAR AS resolved_by, NULL::INTEGER AS episode_nudges,
       NULL::BOOLEAN AS ends_on_stall, NULL::BOOLEAN AS delivered_nudged, NULL::VARCHAR AS would_do,
       NULL::VARCHAR AS outcome
FROM rounds_core r
WHERE false;
