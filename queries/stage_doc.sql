-- One-document formats (a JSON array or object per file, staged whole as line 1): the document, whether
-- it parses, and its JSON type. Run before <format>_events.sql for every FormatSpec with whole_file.
-- Input: stage_lines. Output: stage_doc (fid, txt, bad_excerpt, blank, ok, shape, problem, excerpt).
CREATE OR REPLACE TEMP TABLE stage_doc AS
SELECT s.fid, s.txt, s.bad_excerpt, s.blank,
       s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) AS ok,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) THEN json_type(s.txt) END AS shape,
       -- what makes the document itself a reject in every format (formats add their shape rules)
       CASE WHEN s.bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN NOT s.blank AND NOT json_valid(s.txt) THEN 'invalid JSON (truncated or malformed document)' END AS problem,
       coalesce(s.bad_excerpt, left(s.txt, 120)) AS excerpt
FROM stage_lines s;
