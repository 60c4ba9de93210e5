-- The key columns of the batch's events (fmt_events, often a costly view: evaluated here once, narrowly,
-- without text), for hold_tail.sql and for the seq that ingest_commit.sql sets at insert. The view's joins as
-- written, as in ingest_commit.sql's INSERT of the same view: a held Claude batch's `cc` is an Arrow scan whose row
-- estimate is about 0, and the optimizer built the anti join's hash table on it instead of on fmt_fates' few rows.
SET disabled_optimizers = 'join_order,build_side_probe_side';

CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT e.fid, e.line, e.last_line, e.part, e.role, e.session_id, e.ts, e.model, e.turn_id
FROM fmt_events e;

RESET disabled_optimizers;
