-- Origin labels, step 3: the first matching library entry per event (rank order) and the final table.
-- Inputs: events, ul_events, ul_cand (steps 1 and 2; keyed by the events' rowid, rid), label_overrides; the macro
-- label_tool_result (label_structural.sql). Output: table user_labels.
CREATE OR REPLACE TEMP TABLE ul_match AS
SELECT rid,
       min_by({'id': id, 'origin': origin, 'starts_request': starts_request, 'human_content': human_content}, rank) AS m
FROM ul_cand
GROUP BY rid;

-- a queue-operation enqueue whose text later became a user line of the same session is a copy of that
-- line (the enqueue/dequeue pair in front of every prompt of the desktop app): not a request of its own
CREATE OR REPLACE TEMP TABLE ul_queue_copies AS
SELECT DISTINCT q.rid
FROM ul_events q
JOIN ul_events u ON u.session_id = q.session_id AND u.seq > q.seq AND u.role = 'user' AND u.kind = 'message'
                AND u.t = q.t
WHERE q.kind = 'queued_input' AND q.t <> '';

-- (declared first so that event_id is stored uncompressed, as in turn_boundaries.sql: unique ids gain little
-- from DuckDB's dictionary + FSST compression and its analysis was the largest cost of writing this table)
CREATE OR REPLACE TABLE user_labels (
    event_id VARCHAR USING COMPRESSION uncompressed, origin VARCHAR, origin_rule VARCHAR, human_content BOOLEAN,
    starts_request BOOLEAN);

-- ('override:' is put in front of the rule only on the rows an override changed, in a CASE, not by
-- concatenating '' to every row's rule: at 2M generated events, one thread, the INSERT 0.176 -> 0.165 CPU s, median
-- of 21 alternating; a few per cent, the rest of its time is reading events and writing the table)
INSERT INTO user_labels
SELECT event_id, origin, CASE WHEN overridden THEN 'override:' || rule ELSE rule END AS origin_rule, human_content,
       starts_request
FROM (
    SELECT u.event_id,
           coalesce(o.origin, m.m.origin,
                    CASE WHEN label_tool_result(u.role, u.kind) THEN 'tool_result'   -- (label_structural.sql)
                         WHEN u.kind = 'context' THEN 'automatic'
                         ELSE 'human' END) AS origin,
           o.origin IS NOT NULL AS overridden,
           coalesce(m.m.id,
                    CASE WHEN label_tool_result(u.role, u.kind) THEN 'tool_result'
                         WHEN u.kind = 'context' THEN u.source_format || '.unpaired_context'
                         WHEN u.kind = 'queued_input' AND c.rid IS NOT NULL THEN u.source_format || '.queued_copy'
                         WHEN u.kind = 'queued_input' THEN u.source_format || '.queued_input'
                         ELSE 'default_human' END) AS rule,
           coalesce(m.m.human_content, false) AS human_content,
           CASE WHEN c.rid IS NOT NULL THEN false
                WHEN m.m.id IS NOT NULL THEN m.m.starts_request
                WHEN u.kind = 'context' THEN false
                ELSE true END AS starts_request
    -- (every user/tool event, read from events: ul_events holds only those an entry or the queue check reads)
    FROM (SELECT rowid AS rid, event_id, role, kind, source_format FROM events WHERE role IN ('user', 'tool')) u
    LEFT JOIN ul_match m USING (rid)
    LEFT JOIN ul_queue_copies c USING (rid)
    LEFT JOIN (SELECT event_id, any_value(origin) AS origin FROM label_overrides GROUP BY event_id) o USING (event_id)
);

-- (no primary-key index: event_id is unique as in events, and building the index cost 1.3 s per million
-- events, more than any other step of the labels)

DROP TABLE IF EXISTS ul_events;
DROP TABLE IF EXISTS ul_lib;
DROP TABLE IF EXISTS ul_match;
DROP TABLE IF EXISTS ul_cand;
DROP TABLE IF EXISTS ul_queue_copies;
