-- Arize Phoenix span JSON lines (issue 22): one span a line as phoenix.trace.span_json_encoder writes it
-- (Arize-ai/phoenix src/phoenix/trace/span_json_encoder.py: {name, context: {trace_id, span_id}, span_kind,
-- parent_id, start_time, end_time (ISO 8601), status_code (OK / ERROR / UNSET), status_message,
-- attributes, events, conversation}). The attributes are OpenInference's, nested ({"llm": {"input_messages":
-- [{"message": {...}}]}}) or flat with dotted keys ({"llm.input_messages": [{"message.role": ...}]}): both
-- are flattened to OTLP-style dotted keys (list positions as .N., leaves as strings) and the span is handed
-- to otlp_spans.sql, which reads it like an OTLP OpenInference span (span_kind stands in for a missing
-- openinference.span.kind). Input: stage_lines. Output: ot_raw, ot_flat (as otlp_exports.sql writes them).
CREATE OR REPLACE TEMP TABLE ot_raw AS
SELECT s.fid, s.line, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN left(s.txt, 120) END AS excerpt,
       CASE WHEN s.txt IS NULL THEN 'invalid UTF-8' WHEN s.blank THEN NULL WHEN j IS NULL THEN 'invalid JSON'
            WHEN j.context IS NULL AND j.span_kind IS NULL THEN 'missing field: context'
            WHEN json_type(j.attributes) IS DISTINCT FROM 'OBJECT' AND j.attributes IS NOT NULL THEN 'malformed attributes' END AS problem,
       j
FROM (SELECT o.*, CASE WHEN o.txt IS NOT NULL AND NOT o.blank THEN parse_line(o.txt, '{"name":"VARCHAR",
        "context":{"trace_id":"VARCHAR","span_id":"VARCHAR"},"span_kind":"VARCHAR","parent_id":"VARCHAR",
        "start_time":"VARCHAR","end_time":"VARCHAR","status_code":"VARCHAR","status_message":"VARCHAR",
        "attributes":"JSON"}') END AS j
      FROM stage_lines o) s;

CREATE OR REPLACE TEMP TABLE ot_flat AS
WITH leaves AS (
    SELECT r.fid, r.line,
           list({'key': regexp_replace(regexp_replace(substr(t.fullkey, 3), '\[(\d+)\]', '.\1', 'g'), '"', '', 'g'),
                 'value': json_object('stringValue', CASE WHEN t.type = 'VARCHAR' THEN t.value ->> '$' ELSE t.value::VARCHAR END)}
                ORDER BY t.id) AS attrs
    FROM ot_raw r, json_tree(r.j.attributes) t
    WHERE r.problem IS NULL AND t.type NOT IN ('OBJECT', 'ARRAY') AND t.type IS NOT NULL
    GROUP BY ALL
)
SELECT r.fid, r.line, 1 AS span_no, 'phoenix' AS scope, []::STRUCT(key VARCHAR, value JSON)[] AS res,
       {'traceId': r.j.context.trace_id, 'spanId': r.j.context.span_id, 'parentSpanId': r.j.parent_id, 'name': r.j.name,
        'startTimeUnixNano': epoch_ns(try_cast(r.j.start_time AS TIMESTAMPTZ))::VARCHAR,
        'endTimeUnixNano': epoch_ns(try_cast(r.j.end_time AS TIMESTAMPTZ))::VARCHAR,
        'attributes': coalesce(l.attrs, []) || [{'key': 'openinference.span.kind', 'value': json_object('stringValue', r.j.span_kind)}],
        'events': []::STRUCT(timeUnixNano VARCHAR, name VARCHAR, attributes STRUCT(key VARCHAR, value JSON)[])[],
        'status': {'code': CASE WHEN upper(r.j.status_code) = 'ERROR' THEN '2' ELSE '0' END::JSON, 'message': r.j.status_message}} AS sp
FROM ot_raw r LEFT JOIN leaves l USING (fid, line)
WHERE r.problem IS NULL AND NOT r.blank;
