-- OTLP JSON trace file holding one export as a (pretty-printed) JSON document: the reader stages the
-- whole file as line 1 (FormatSpec whole_file); otlp_exports.sql and otlp_spans.sql (run next) read it like one export line.
-- Input: stage_lines. Output: ot_src (fid, line, txt, blank, bad_excerpt).
CREATE OR REPLACE TEMP VIEW ot_src AS
SELECT fid, line, txt, blank, bad_excerpt FROM stage_lines;
