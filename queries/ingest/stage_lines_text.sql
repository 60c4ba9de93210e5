-- The lines of one ingest batch staged as Arrow strings (stage_raw: fid, line, raw VARCHAR), which batch.py does
-- when pyarrow found every line valid UTF-8: read in place, with no decode copying each line (stage_lines.sql
-- decodes a batch holding an invalid line one line at a time). The same columns as stage_lines.sql.
CREATE OR REPLACE TEMP VIEW stage_lines AS
SELECT fid, line, raw AS txt, is_blank(raw) AS blank, NULL::VARCHAR AS bad_excerpt FROM stage_raw;
