-- Decode the raw lines of one ingest batch (stage_raw: fid, line, raw BLOB) and classify the
-- generic failures every format shares. Inputs: stage_raw, batch_files (fid, file, stem, ...).
CREATE OR REPLACE TEMP TABLE stage_lines AS
SELECT fid, line, txt,
       txt IS NOT NULL AND is_blank(txt) AS blank,
       CASE WHEN txt IS NULL THEN left(replace(replace(replace(CAST(raw AS VARCHAR), '\x22', '"'), '\x0A', ''), '\x0D', ''), 120) END AS bad_excerpt
FROM (SELECT fid, line, raw, try(decode(raw)) AS txt FROM stage_raw);
