-- Drift: records of a known format whose shape its reader does not know (a new record type, a renamed
-- discriminator), which the reader skipped as kind `unknown_shape:<shape>[ @<tool version>]`, counted per
-- format, tool version (Claude Code `version`, Codex session_meta cli_version; NULL where the format carries
-- none) and shape.
-- Input: skipped, files. $files, $start_lines: one ingest run's files and the line each was read from (the
-- run's rows only, as the ingest summary counts them), or both NULL: the whole database (the report).
SELECT f.source_format AS format,
       nullif(regexp_extract(s.kind, ' @(.+)$', 1), '') AS version,
       regexp_replace(s.kind, '^unknown_shape:(.*?)( @.+)?$', '\1') AS shape,
       count(*)::INTEGER AS records,
       count(DISTINCT s.file)::INTEGER AS files
FROM skipped s JOIN files f ON f.path = s.file
WHERE s.kind LIKE 'unknown_shape:%'
  AND ($files::VARCHAR[] IS NULL
       OR s.line >= list_extract($start_lines::BIGINT[], list_position($files::VARCHAR[], s.file)))
GROUP BY ALL
ORDER BY records DESC, format, version, shape;
