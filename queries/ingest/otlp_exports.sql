-- OTLP JSON exports -> ot_raw (one row per record: fid, line, blank, bad_excerpt, excerpt, problem: why the
-- record is no export, NULL when it is one; rs: its resourceSpans) and ot_flat (one row per span: fid, line,
-- span_no, scope, res: resource attributes, sp: the span as OTLP JSON names its fields). Run after
-- otlp_events.sql / otlp_doc_events.sql (ot_src), before otlp_spans.sql.
-- one typed parse of each line (json_transform is lenient about types: a field of the wrong type reads as
-- NULL); the line is looked at again only when it holds no resourceSpans list, to say why
CREATE OR REPLACE TEMP TABLE ot_raw AS
SELECT s.fid, s.line, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NULL OR s.blank THEN NULL ELSE left(s.txt, 120) END AS excerpt,
       j.resourceSpans AS rs,
       CASE WHEN s.txt IS NULL THEN 'invalid UTF-8' WHEN s.blank THEN NULL WHEN j IS NULL THEN 'invalid JSON'
            WHEN j.resourceSpans IS NOT NULL THEN NULL
            WHEN json_type(s.txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN json_type(s.txt, '$.resourceSpans') IS NULL THEN 'missing field: resourceSpans'
            ELSE 'malformed resourceSpans' END AS problem
FROM (SELECT o.*, CASE WHEN o.txt IS NOT NULL AND NOT o.blank THEN parse_line(o.txt, '{"resourceSpans":[{
         "resource":{"attributes":[{"key":"VARCHAR","value":"JSON"}]},
         "scopeSpans":[{"scope":{"name":"VARCHAR"},
           "spans":[{"traceId":"VARCHAR","spanId":"VARCHAR","parentSpanId":"VARCHAR","name":"VARCHAR",
                     "startTimeUnixNano":"VARCHAR","endTimeUnixNano":"VARCHAR",
                     "attributes":[{"key":"VARCHAR","value":"JSON"}],
                     "events":[{"timeUnixNano":"VARCHAR","name":"VARCHAR","attributes":[{"key":"VARCHAR","value":"JSON"}]}],
                     "status":{"code":"JSON","message":"VARCHAR"}}]}]}]}') END AS j
      FROM ot_src o) s;

CREATE OR REPLACE TEMP TABLE ot_flat AS
SELECT fid, line, x.i AS span_no, x.s.scope AS scope, x.s.res AS res, x.s.sp AS sp
    FROM (SELECT fid, line, unnest(list_transform(flatten(list_transform(rs, lambda r:
                     flatten(list_transform(coalesce(r.scopeSpans, []), lambda ss:
                         list_transform(coalesce(ss.spans, []), lambda sp:
                             {'scope': ss.scope.name, 'res': r.resource.attributes, 'sp': sp}))))),
                 lambda s, i: {'i': i, 's': s})) AS x
          FROM ot_raw WHERE rs IS NOT NULL);
