-- Origin labels, step 3: the first matching library entry per event (rank order) and the final table.
-- Inputs: events, ul_events, ul_cand (steps 1 and 2; keyed by the events' rowid, rid), label_overrides; the macros
-- label_tool_result, label_default_code, label_rule_formats (label_structural.sql). Parameter: n_lib (the library's
-- entries). Output: tables user_labels_rules, user_labels_narrow and user_labels_uncoded (the view user_labels:
-- user_labels_view.sql).
CREATE OR REPLACE TEMP TABLE ul_match AS
SELECT rid,
       min_by({'rank': rank, 'origin': origin, 'starts_request': starts_request, 'human_content': human_content}, rank) AS m
FROM ul_cand
GROUP BY rid;

-- a queue-operation enqueue whose text later became a user line of the same session is a copy of that
-- line (the enqueue/dequeue pair in front of every prompt of the desktop app): not a request of its own
-- (read from events, with the texts compared as ul_events has them: ul_strip, queries/replay/user_labels.sql; the
-- user messages of the sessions with such an enqueue only)
CREATE OR REPLACE TEMP TABLE ul_queue_copies AS
WITH q AS (
    SELECT rid, session_id, seq, t
    FROM (SELECT rowid AS rid, session_id, seq, ul_strip(coalesce(text, '')) AS t
          FROM events WHERE "role" IN ('user', 'tool') AND kind = 'queued_input')
    WHERE t <> ''
)
SELECT DISTINCT q.rid
FROM q
JOIN (SELECT session_id, seq, ul_strip(coalesce(text, '')) AS t
      FROM events
      WHERE "role" = 'user' AND kind = 'message' AND session_id IN (SELECT session_id FROM q)) u
  ON u.session_id = q.session_id AND u.seq > q.seq AND u.t = q.t;

-- The rules' codes (label_structural.sql has the layout of a label's code): 1 default_human, 2 tool_result, 3 + rank
-- each library entry's id (rank: 0, 1, ... in the order tried), then three a format of label_rule_formats(). The
-- same inputs give the same table (the config and library are the labels' stamp's inputs, this file its rules), so
-- an incremental run's codes are those of the table it merges into.
CREATE OR REPLACE TABLE user_labels_rules AS
SELECT generate_subscripts(r, 1)::INTEGER AS code, unnest(r) AS origin_rule
FROM (SELECT ['default_human', 'tool_result'] || (SELECT coalesce(list(id ORDER BY rank), []) FROM prompt_library)
             || flatten(list_transform(label_rule_formats(),
                                       lambda f: [f || '.unpaired_context', f || '.queued_copy', f || '.queued_input'])) AS r);

-- The labels as codes, one INTEGER a row (the view user_labels, user_labels_view.sql, gives the strings): at 10M
-- generated events writing origin and origin_rule as strings cost 0.6 of the INSERT's 1.46 CPU s, and two
-- one-byte codes 0.26 (docs/benchmarks.md "labsweep14"); one column for all five fields, as the codes of
-- turn_boundaries_narrow (every stored column costs its share per row group, docs/replay-scan.md "bounds13").
-- A label whose rule has no code (a format not in label_rule_formats(): code >> 5 = 0) has its rule in the side
-- table user_labels_uncoded below, not in a column here: a column NULL on every other row cost 0.15-0.2 CPU s to
-- write at 10M generated events (docs/replay-scan.md "labels17").
-- (declared first so that event_id is stored uncompressed, as in turn_boundaries.sql: unique ids gain little
-- from DuckDB's dictionary + FSST compression and its analysis was the largest cost of writing this table)
CREATE OR REPLACE TABLE user_labels_narrow (event_id VARCHAR USING COMPRESSION uncompressed, code INTEGER);

-- A label no library entry, queue copy, override or context / queued-input rule decided is one of the two
-- structural defaults (label_default_code): only the other rows compute their code from its parts (a CASE
-- evaluates its ELSE on those rows alone).
INSERT INTO user_labels_narrow
SELECT event_id,
       CASE WHEN plain THEN label_default_code("role", kind)
            ELSE origin | CASE WHEN human_content THEN 4 ELSE 0 END | CASE WHEN starts_request THEN 0 ELSE 8 END
                 | CASE WHEN o_origin IS NOT NULL THEN 16 ELSE 0 END | (coalesce(rule, 0) << 5) END AS code
FROM (
    SELECT u.event_id, u."role", u.kind, o.origin AS o_origin,
           m.rid IS NULL AND c.rid IS NULL AND o.origin IS NULL AND u.kind NOT IN ('context', 'queued_input') AS plain,
           CASE coalesce(o.origin, m.m.origin) WHEN 'human' THEN 1 WHEN 'automatic' THEN 2 WHEN 'tool_result' THEN 3
                ELSE CASE WHEN label_tool_result(u."role", u.kind) THEN 3   -- (label_structural.sql)
                          WHEN u.kind = 'context' THEN 2
                          ELSE 1 END END AS origin,
           CASE WHEN m.rid IS NOT NULL THEN 3 + m.m.rank
                WHEN label_tool_result(u."role", u.kind) THEN 2
                WHEN u.kind IN ('context', 'queued_input')
                -- (NULL for a format the list does not hold: its rule goes to user_labels_uncoded, below)
                THEN 3 + $n_lib::INTEGER + 3 * (list_position(label_rule_formats(), u.source_format) - 1)
                     + CASE WHEN u.kind = 'context' THEN 0 WHEN c.rid IS NOT NULL THEN 1 ELSE 2 END
                ELSE 1 END AS rule,
           coalesce(m.m.human_content, false) AS human_content,
           CASE WHEN c.rid IS NOT NULL THEN false
                WHEN m.rid IS NOT NULL THEN m.m.starts_request
                WHEN u.kind = 'context' THEN false
                ELSE true END AS starts_request
    -- (every user/tool event, read from events: ul_events holds only those an entry or the queue check reads)
    FROM (SELECT rowid AS rid, event_id, "role", kind, source_format FROM events WHERE "role" IN ('user', 'tool')) u
    LEFT JOIN ul_match m USING (rid)
    LEFT JOIN ul_queue_copies c USING (rid)
    LEFT JOIN (SELECT event_id, any_value(origin) AS origin FROM label_overrides GROUP BY event_id) o USING (event_id)
);

-- The labels no rule code stands for (code >> 5 = 0), usually none: a context or queued-input record, not a tool's,
-- of a format outside label_rule_formats() that no library entry decided (the rows above whose rule is NULL). Kept
-- with their session (derive replaces them by session), id, code (as above: no entry, so no human_content) and
-- origin_rule as the view gives it ('override:' in front when the user's labels file changed the origin).
CREATE OR REPLACE TABLE user_labels_uncoded (session_id VARCHAR, event_id VARCHAR, code INTEGER, origin_rule VARCHAR);

INSERT INTO user_labels_uncoded
SELECT u.session_id, u.event_id,
       CASE coalesce(o.origin, CASE WHEN u.kind = 'context' THEN 'automatic' ELSE 'human' END)
            WHEN 'human' THEN 1 WHEN 'automatic' THEN 2 ELSE 3 END
           | CASE WHEN u.kind = 'context' OR c.rid IS NOT NULL THEN 8 ELSE 0 END
           | CASE WHEN o.origin IS NOT NULL THEN 16 ELSE 0 END AS code,
       CASE WHEN o.origin IS NOT NULL THEN 'override:' ELSE '' END || u.source_format
           || CASE WHEN u.kind = 'context' THEN '.unpaired_context' WHEN c.rid IS NOT NULL THEN '.queued_copy'
                   ELSE '.queued_input' END AS origin_rule
FROM (SELECT rowid AS rid, session_id, event_id, kind, source_format FROM events
      WHERE "role" = 'user' AND kind IN ('context', 'queued_input')
        AND NOT list_contains(label_rule_formats(), source_format)) u
LEFT JOIN ul_queue_copies c USING (rid)
LEFT JOIN (SELECT event_id, any_value(origin) AS origin FROM label_overrides GROUP BY event_id) o USING (event_id)
WHERE u.rid NOT IN (SELECT rid FROM ul_match);

-- (no primary-key index: event_id is unique as in events, and building the index cost 1.3 s per million
-- events, more than any other step of the labels)

DROP TABLE IF EXISTS ul_events;
DROP TABLE IF EXISTS ul_lib;
DROP TABLE IF EXISTS ul_match;
DROP TABLE IF EXISTS ul_cand;
DROP TABLE IF EXISTS ul_queue_copies;
