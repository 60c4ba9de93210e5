-- One-document formats (a JSON array or object per file, staged whole as line 1): the document, whether
-- it parses, and its JSON type. Run before <format>_events.sql for every FormatSpec with whole_file.
-- Input: stage_lines. Output: stage_doc (fid, txt, bad_excerpt, blank, ok, shape).
CREATE OR REPLACE TEMP TABLE stage_doc AS
SELECT s.fid, s.txt, s.bad_excerpt, s.blank,
       s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) AS ok,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) THEN json_type(s.txt) END AS shape
FROM stage_lines s;
