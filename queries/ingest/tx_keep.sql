-- A batch's context outputs, kept for the flush that books its files (file_stats.sql reads them as tx_ctx and
-- tx_resume, tx_tables.sql): fmt_ctx and fmt_resume are the batch's, often views over its staged lines,
-- replaced by the next batch. Run after the batch's parse, inside the ingest transaction.
INSERT INTO tx_ctx SELECT fid, ctx_session, ctx_model, ctx_turn FROM fmt_ctx;

INSERT INTO tx_resume SELECT fid, line, from_line, ctx_session, ctx_model, ctx_turn FROM fmt_resume;
