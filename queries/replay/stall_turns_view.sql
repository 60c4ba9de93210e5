-- The view `turns`: turns_by_seq (queries/replay/stall_turns_by_seq_view.sql) with the ids of the turn's start (its
-- event at start_seq, turns 1 on; turn 0 has no start) and of its delivered reply (the event at delivered_seq), in
-- the column order and types of the table the view replaced. seq is unique in a session (ingest numbers it), so
-- each LEFT JOIN finds at most one event. Readers that need neither id read turns_by_seq: this view's joins read
-- the events (about a second at 10M events).
CREATE OR REPLACE VIEW turns AS
SELECT t.session_id, t.turn_id, t.source_format, t.model, t.provider,
       CASE WHEN t.turn_id > 0 THEN s.event_id END AS start_event_id, t.start_seq, t.end_seq, t.ts_start, t.ts_end,
       t.n_rounds, t.n_tool_calls, t.n_stalls, t.n_nudged, d.event_id AS delivered_event_id, t.delivered_round_kind,
       t.delivered_finish, t.outcome
FROM turns_by_seq t
LEFT JOIN events s ON s.session_id = t.session_id AND s.seq = t.start_seq
LEFT JOIN events d ON d.session_id = t.session_id AND d.seq = t.delivered_seq;
