-- OTLP JSON trace files (issue 22), one export per line: what the OpenTelemetry Collector's file exporter
-- and the Python SDK's FileSpanExporter write ({"resourceSpans": [...]} a line; gzip read by the reader).
-- The records this format reads: the staged lines. otlp_exports.sql and otlp_spans.sql (run next, FormatSpec.then) do the
-- work (otlp_spans.sql documents the mapping); otlp_doc_events.sql stages a pretty-printed single export instead.
-- Input: stage_lines. Output: ot_src (fid, line, txt, blank, bad_excerpt).
CREATE OR REPLACE TEMP VIEW ot_src AS
SELECT fid, line, txt, blank, bad_excerpt FROM stage_lines;
