-- The parse outputs file_stats.sql reads, gathered from every batch since the last flush (stallscan/ingest/tx.py
-- books the batches' files once before each COMMIT and at the end of each pass, not once per batch): a
-- batch's fmt_ctx and fmt_resume (tx_keep.sql) and its held rows (hold_tail.sql). The batches' fids are
-- unique across them. Created empty at the start of a run and again after each flush.
CREATE OR REPLACE TEMP TABLE tx_ctx (fid INTEGER, ctx_session VARCHAR, ctx_model VARCHAR, ctx_turn VARCHAR);

CREATE OR REPLACE TEMP TABLE tx_resume (fid INTEGER, line INTEGER, from_line INTEGER, ctx_session VARCHAR,
                                        ctx_model VARCHAR, ctx_turn VARCHAR);

CREATE OR REPLACE TEMP TABLE tx_held (fid INTEGER, from_line INTEGER);

CREATE OR REPLACE TEMP TABLE tx_held_events (fid INTEGER, line INTEGER, last_line INTEGER, role VARCHAR,
                                             session_id VARCHAR, model VARCHAR, turn_id VARCHAR);
