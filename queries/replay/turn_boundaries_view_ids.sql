-- The view `turn_boundaries` over `turn_boundaries_by_seq` (queries/replay/turn_boundaries_view.sql, made first).
-- Made by a full replay only (stallscan.replay.boundaries._view): an incremental run's scratch schema makes
-- turn_boundaries_by_seq alone, which its rule variants read; nothing there reads this view, and the database's
-- own stays as the full replay made it.
-- The previous reply's event id: the assistant event at (session_id, prev_seq) (ingest keeps seq unique in a
-- session). A plain join: DuckDB would drop a join on events grouped by those keys from a query that does not read
-- prev_event_id, but only under some aggregates (count(*), sum(...)); a query of rows or a GROUPING SETS ran the
-- GROUP BY of every event, 3.1 CPU s at 10M generated events (one thread) against 0.6-0.7 for this join. So every
-- reader in the project that does not read prev_event_id reads turn_boundaries_by_seq (the report's and the
-- sweep's queries, the replay's own; a table of that name from a given turn_boundaries: stallscan.export.
-- connect_parquet; a view over one made by hand: stallscan.sweep.core), and only prev_event_id's readers (export,
-- a user's query of the view) pay the join (docs/replay-scan.md, "narrow21").
CREATE OR REPLACE VIEW turn_boundaries AS
SELECT b.session_id, b.seq, b.event_id, b.ts, b.gap_s, b.prev_reply_status, b.initiator, b.decided_by, b.decision,
       b.origin, b.is_human_turn, b."error", b.gap_only_decision, b.gap_only_error, b.header_only_decision,
       b.header_only_error, b.source_format, b."role", b.kind, b.origin_rule, b.human_content, b.starts_request,
       r.event_id AS prev_event_id, b.gap_raw_s, b.ts_quality, b.threshold
FROM turn_boundaries_by_seq b
LEFT JOIN (SELECT session_id, seq, event_id FROM events WHERE "role" = 'assistant') r
       ON r.session_id = b.session_id AND r.seq = b.prev_seq;
