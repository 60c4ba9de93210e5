-- The view `user_labels`: user_labels_narrow's codes (queries/replay/label_structural.sql has their layout) as the
-- strings and flags of the table it replaced, in its column order: event_id, origin (human / automatic /
-- tool_result), origin_rule (the rule's code looked up in user_labels_rules; 'override:' in front when the user's
-- labels file changed the origin; a label with no rule code, code >> 5 = 0, reads it from user_labels_uncoded),
-- human_content, starts_request. Plain SQL (no stallscan macro), so the view reads in any DuckDB that opens the
-- database.
CREATE OR REPLACE VIEW user_labels AS
SELECT n.event_id,
       ['human', 'automatic', 'tool_result'][n.code & 3] AS origin,
       CASE WHEN n.code < 32 THEN u.origin_rule
            WHEN (n.code & 16) <> 0 THEN 'override:' || r.rules[n.code >> 5]
            ELSE r.rules[n.code >> 5] END AS origin_rule,
       (n.code & 4) <> 0 AS human_content,
       (n.code & 8) = 0 AS starts_request
FROM user_labels_narrow n
CROSS JOIN (SELECT list(origin_rule ORDER BY code) AS rules FROM user_labels_rules) r
LEFT JOIN user_labels_uncoded u ON n.code < 32 AND u.event_id = n.event_id;
