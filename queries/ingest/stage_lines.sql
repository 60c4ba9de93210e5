-- Decode the raw lines of one ingest batch (stage_raw: fid, line, raw BLOB): a view, so the text is
-- not copied; every format's parse reads it once. txt is NULL for invalid UTF-8 (kept as a reject).
CREATE OR REPLACE TEMP VIEW stage_lines AS
SELECT fid, line, txt,
       txt IS NOT NULL AND is_blank(txt) AS blank,
       CASE WHEN txt IS NULL THEN left(replace(replace(replace(CAST(raw AS VARCHAR), '\x22', '"'), '\x0A', ''), '\x0D', ''), 120) END AS bad_excerpt
FROM (SELECT fid, line, raw, try(decode(raw)) AS txt FROM stage_raw);
