-- The labels as codes from a table of their strings: a database of parquet outputs (stallscan.export.connect_parquet)
-- holds `user_labels` as a table; the rule variants (turn_boundaries_variants.sql) read the codes. The same layout
-- as user_labels_finish.sql's (label_structural.sql): 1 default_human, 2 tool_result, then the table's other rules
-- in sorted order; 'override:' in front of a rule is the code's bit 4. The view user_labels_view.sql replaces the
-- table and reads back the same rows. Input: the table user_labels. Output: user_labels_rules, user_labels_narrow,
-- user_labels_uncoded (empty).
CREATE OR REPLACE TABLE user_labels_rules AS
SELECT generate_subscripts(r, 1)::INTEGER AS code, unnest(r) AS origin_rule
FROM (SELECT ['default_human', 'tool_result']
             || coalesce(list(rule ORDER BY rule) FILTER (rule NOT IN ('default_human', 'tool_result')), []) AS r
      FROM (SELECT DISTINCT CASE WHEN starts_with(origin_rule, 'override:') THEN origin_rule[10:] ELSE origin_rule END
                AS rule
            FROM user_labels));

CREATE OR REPLACE TABLE user_labels_narrow AS
SELECT l.event_id,
       (list_position(['human', 'automatic', 'tool_result'], l.origin) | CASE WHEN l.human_content THEN 4 ELSE 0 END
        | CASE WHEN l.starts_request THEN 0 ELSE 8 END | CASE WHEN starts_with(l.origin_rule, 'override:') THEN 16 ELSE 0 END
        | (r.code << 5))::INTEGER AS code
FROM user_labels l
JOIN user_labels_rules r
  ON r.origin_rule = CASE WHEN starts_with(l.origin_rule, 'override:') THEN l.origin_rule[10:] ELSE l.origin_rule END;

-- (every rule has a code here: no label is left for the side table of the rules without one)
CREATE OR REPLACE TABLE user_labels_uncoded (session_id VARCHAR, event_id VARCHAR, code INTEGER, origin_rule VARCHAR);

DROP TABLE user_labels;
