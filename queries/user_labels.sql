-- Origin labels (the truth): who wrote each user-role event, and whether it is itself a model request.
-- Inputs: events; prompt_library (the automatic-prompt library, loaded by stallscan.labels from
-- stallscan/data/prompts.toml + the user's stallscan.toml: rank, id, harness[], match, text, value,
-- flag, kinds[], sidechain, first, after, origin, starts_request, human_content);
-- label_overrides (event_id, origin) from a user's labels file (may be empty).
-- Output: table user_labels, one row per events row with role user or tool.
-- Order of decision: override file > first library entry that matches (rank order) > structural
-- fallback (tool result; Codex unpaired item; anything else human).

-- every user/tool event with the context some entries need
CREATE OR REPLACE TEMP TABLE ul_events AS
WITH ev AS (
    SELECT event_id, session_id, seq, source_format, role, kind, is_sidechain, meta,
           trim(coalesce(text, ''), chr(32) || chr(9) || chr(10) || chr(13)) AS t
    FROM events WHERE role IN ('user', 'tool')
), msgs AS (
    SELECT event_id,
           row_number() OVER w = 1 AS is_first,
           lag(t) OVER w AS prev_text
    FROM ev WHERE role = 'user' AND kind = 'message'
    WINDOW w AS (PARTITION BY session_id ORDER BY seq)
)
SELECT ev.*, coalesce(msgs.is_first, false) AS is_first, msgs.prev_text
FROM ev LEFT JOIN msgs USING (event_id);

-- library entries that can apply to each (format, kind) present: a hash join instead of a cross product
CREATE OR REPLACE TEMP TABLE ul_lib AS
SELECT f.source_format, unnest(p.kinds) AS kind, p.*
FROM (SELECT DISTINCT source_format FROM ul_events) f
CROSS JOIN prompt_library p
WHERE len(list_filter(p.harness, lambda h: h = '*' OR starts_with(f.source_format, h))) > 0;

-- first matching entry per event
CREATE OR REPLACE TEMP TABLE ul_match AS
SELECT u.event_id,
       min_by({'id': l.id, 'origin': l.origin, 'starts_request': l.starts_request,
               'human_content': l.human_content}, l.rank) AS m
FROM ul_events u
JOIN ul_lib l ON l.source_format = u.source_format AND l.kind = u.kind
WHERE (l.sidechain IS NULL OR l.sidechain = u.is_sidechain)
  AND (l.first IS NULL OR l.first = u.is_first)
  AND (l.after IS NULL OR contains(coalesce(u.prev_text, ''), l.after))
  AND (l.flag IS NULL OR json_extract_string(u.meta, '$."' || l.flag || '"') = 'true')
  AND CASE l.match
        WHEN 'flag'     THEN json_extract_string(u.meta, '$."' || l.text || '"') = l.value
        WHEN 'prefix'   THEN starts_with(u.t, l.text)
        WHEN 'exact'    THEN u.t = l.text
        WHEN 'contains' THEN contains(u.t, l.text)
        WHEN 'regex'    THEN regexp_matches(u.t, l.text)
        ELSE false END
GROUP BY u.event_id;

-- a queue-operation enqueue whose text later became a user line of the same session is a copy of that
-- line (the enqueue/dequeue pair in front of every prompt of the desktop app): not a request of its own
CREATE OR REPLACE TEMP TABLE ul_queue_copies AS
SELECT DISTINCT q.event_id
FROM ul_events q
JOIN ul_events u ON u.session_id = q.session_id AND u.seq > q.seq AND u.role = 'user' AND u.kind = 'message'
                AND u.t = q.t
WHERE q.kind = 'queued_input' AND q.t <> '';

CREATE OR REPLACE TABLE user_labels AS
SELECT u.event_id,
       coalesce(o.origin, m.m.origin,
                CASE WHEN u.role = 'tool' OR u.kind = 'tool_result' THEN 'tool_result'
                     WHEN u.kind = 'context' THEN 'automatic'
                     ELSE 'human' END) AS origin,
       CASE WHEN o.origin IS NOT NULL THEN 'override:' ELSE '' END ||
       coalesce(m.m.id,
                CASE WHEN u.role = 'tool' OR u.kind = 'tool_result' THEN 'tool_result'
                     WHEN u.kind = 'context' THEN u.source_format || '.unpaired_context'
                     WHEN u.kind = 'queued_input' AND c.event_id IS NOT NULL THEN u.source_format || '.queued_copy'
                     WHEN u.kind = 'queued_input' THEN u.source_format || '.queued_input'
                     ELSE 'default_human' END) AS origin_rule,
       coalesce(m.m.human_content, false) AS human_content,
       CASE WHEN c.event_id IS NOT NULL THEN false
            WHEN m.m.id IS NOT NULL THEN m.m.starts_request
            WHEN u.kind = 'context' THEN false
            ELSE true END AS starts_request
FROM ul_events u
LEFT JOIN ul_match m USING (event_id)
LEFT JOIN ul_queue_copies c USING (event_id)
LEFT JOIN (SELECT event_id, any_value(origin) AS origin FROM label_overrides GROUP BY event_id) o USING (event_id);

ALTER TABLE user_labels ADD PRIMARY KEY (event_id);

DROP TABLE IF EXISTS ul_events;
DROP TABLE IF EXISTS ul_lib;
DROP TABLE IF EXISTS ul_match;
DROP TABLE IF EXISTS ul_queue_copies;
