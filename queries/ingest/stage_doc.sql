-- One-document formats (a JSON array or object per file, staged whole as line 1): the document, whether
-- it parses, and its JSON type. Run before <format>_events.sql for every FormatSpec with whole_file.
-- Input: stage_lines. Output: stage_doc (fid, txt, bad_excerpt, blank, ok, shape, problem, excerpt), and the
-- macros doc_elements(path) / doc_rejects(path) every one-document format reads its records and document
-- rejects through (OpenHands, which also takes a single object, states its own rule).
CREATE OR REPLACE TEMP TABLE stage_doc AS
SELECT s.fid, s.txt, s.bad_excerpt, s.blank,
       s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) AS ok,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) THEN json_type(s.txt) END AS shape,
       -- what makes the document itself a reject in every format (formats add their shape rules)
       CASE WHEN s.bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN NOT s.blank AND NOT json_valid(s.txt) THEN 'invalid JSON (truncated or malformed document)' END AS problem,
       coalesce(s.bad_excerpt, left(s.txt, 120)) AS excerpt
FROM stage_lines s;

-- A format's records: the elements of the list at `path` in the document ('$' = the document is the
-- list), numbered 1.. as lines. Documents without such a list give none (doc_rejects books them).
CREATE OR REPLACE TEMP MACRO doc_elements(path) AS TABLE
SELECT fid, x.i::INTEGER AS line, x.e AS e, json_type(x.e) AS etype
FROM (SELECT fid, unnest(list_transform(json_extract(txt, path || '[*]'), lambda e, i: {'i': i, 'e': e})) AS x
      FROM stage_doc WHERE problem IS NULL AND NOT blank AND json_type(txt, path) = 'ARRAY');

-- The document itself as a reject (line 1) when it is unreadable or holds no list at `path`
-- (truncated while being rewritten, a different tool's file, ...).
CREATE OR REPLACE TEMP MACRO doc_rejects(path) AS TABLE
SELECT fid, 1 AS line, 'reject' AS fate,
       coalesce(problem, CASE WHEN path = '$' THEN 'not a JSON array'
                              WHEN shape <> 'OBJECT' THEN 'not a JSON object'
                              ELSE 'missing or malformed field: ' || substr(path, 3) END) AS label,
       excerpt
FROM stage_doc
WHERE NOT blank AND CASE WHEN problem IS NOT NULL THEN true ELSE json_type(txt, path) IS DISTINCT FROM 'ARRAY' END;
