-- openai_tool_calls(tc): an OpenAI chat message's `tool_calls` (a JSON array, or a string holding one, as trace
-- attributes and gateway logs carry it) as a list of {id, name, arguments}; [] for anything else. Arguments
-- stay a string (JSON text) whether they came as a string or as an object. Run before the readers that use
-- it (FormatSpec.before): otlp_spans.sql, litellm_events.sql.
CREATE OR REPLACE TEMP MACRO openai_tool_calls(tc) AS CASE
    WHEN json_type(tc) = 'VARCHAR' AND json_valid(tc ->> '$') AND json_type(tc ->> '$') = 'ARRAY' THEN
         list_transform(json_extract((tc ->> '$')::JSON, '$[*]'), lambda c: {'id': c ->> 'id',
             'name': coalesce(c ->> '$.function.name', c ->> 'name'),
             'arguments': CASE WHEN json_type(coalesce(json_extract(c, '$.function.arguments'), json_extract(c, '$.arguments'))) = 'VARCHAR'
                               THEN coalesce(c ->> '$.function.arguments', c ->> 'arguments')
                               ELSE coalesce(json_extract(c, '$.function.arguments'), json_extract(c, '$.arguments'))::VARCHAR END})
    WHEN json_type(tc) = 'ARRAY' THEN
         list_transform(json_extract(tc, '$[*]'), lambda c: {'id': c ->> 'id',
             'name': coalesce(c ->> '$.function.name', c ->> 'name'),
             'arguments': CASE WHEN json_type(coalesce(json_extract(c, '$.function.arguments'), json_extract(c, '$.arguments'))) = 'VARCHAR'
                               THEN coalesce(c ->> '$.function.arguments', c ->> 'arguments')
                               ELSE coalesce(json_extract(c, '$.function.arguments'), json_extract(c, '$.arguments'))::VARCHAR END})
    ELSE [] END;
