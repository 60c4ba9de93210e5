-- Rule variants of the router's turn-boundary order, replayed beside it.
-- Inputs: events, user_labels_narrow, user_labels_rules and user_labels_uncoded (the labels' codes), turn_boundaries (queries/replay/turn_boundaries.sql, any threshold),
-- tbv_prev (turn_boundaries' previous replies: turn_boundaries_variants_prev.sql, or _prev_view.sql without the stored table),
-- router_variant_rules (rule_set 'marker' | 'automatic', id, match 'kind' | 'rule' | 'reply_status', value,
-- harness VARCHAR[] or NULL; loaded by stallscan.replay.boundary_variants from stallscan/data/router_variants.toml).
-- The decisions are at turn_boundaries' threshold (its steps the variants keep are taken from it as they are).
-- Output: table turn_boundary_variants_marked, the columns below for the rows a variant rule can change (a marker
-- seen, or a known automatic record), which the view turn_boundary_variants (turn_boundaries_variants_view.sql: one
-- row per turn_boundaries row) reads; every other row is the router's own (no marker, not known automatic: each variant
-- decides it by the router's step, decision and error), so it is read from turn_boundaries, not stored twice.
--   marker_seen      a user-role record with a marker since the previous assistant reply (in seq order, the
--                    record itself included): a marker-labelled record, a marker event kind, or a previous
--                    reply whose completion report is a marker status (cancelled)
--   marker_id        that marker's id (the previous reply's status first, else the first marker record)
--   known_automatic  the record is of a known automatic kind (its label comes from an [[automatic]] entry)
--   <v>_decided_by / <v>_decision / <v>_error  for v in marker (marker-aware), notif (notification-aware),
--                    both (marker+notification). Orders:
--     marker: header -> first -> marker (human) -> completion -> gap / no_time
--     notif:  header -> notification (continuation) -> first -> completion -> gap / no_time
--     both:   header -> notification -> first -> marker -> completion -> gap / no_time

-- decision vs truth, as the view turn_boundaries computes each policy's error (queries/replay/turn_boundaries_view.sql)
CREATE OR REPLACE TEMP MACRO boundary_error(starts_request, is_human, decision) AS CASE
    WHEN NOT starts_request THEN 'not_request'
    WHEN decision IS NULL THEN NULL
    WHEN is_human AND decision = 'continuation' THEN 'human_as_auto'
    WHEN NOT is_human AND decision = 'human' THEN 'auto_as_human'
    ELSE 'none' END;

CREATE OR REPLACE TEMP MACRO rule_applies(harness, source_format) AS
    harness IS NULL OR len(list_filter(harness, lambda h: starts_with(source_format, h))) > 0;

-- the rules that apply to each source format present (so every later join is an equi-join)
CREATE OR REPLACE TEMP TABLE tbv_rules AS
SELECT f.source_format, r.rule_set, r.id, r.match, r.value
FROM (SELECT DISTINCT source_format FROM events) f CROSS JOIN router_variant_rules r
WHERE rule_applies(r.harness, f.source_format);

-- the labels' codes of the rules a marker rule names (queries/replay/label_structural.sql: a code is the rule's code
-- << 5 with five bits of origin and flags; with bit 4, the override, the label's rule is 'override:' || the rule):
-- the view user_labels' origin_rule of a label with this code is origin_rule (decoding every label to compare its
-- string cost 0.12 CPU s at 10M generated events)
CREATE OR REPLACE TEMP TABLE tbv_marker_codes AS
SELECT ((r.code << 5) | f.b)::INTEGER AS code, m.value AS origin_rule
FROM (SELECT DISTINCT value FROM tbv_rules WHERE rule_set = 'marker' AND match = 'rule') m
JOIN user_labels_rules r ON m.value = r.origin_rule OR m.value = 'override:' || r.origin_rule
CROSS JOIN range(32) f(b)
WHERE ((f.b & 16) = 0 AND m.value = r.origin_rule) OR ((f.b & 16) <> 0 AND m.value = 'override:' || r.origin_rule);

-- events that are markers themselves (hash joins on the kind and on the label; few rows match)
CREATE OR REPLACE TEMP TABLE tbv_own AS
SELECT event_id, any_value(session_id) AS session_id, any_value(seq) AS seq, min(id) AS own_marker
FROM (SELECT e.event_id, e.session_id, e.seq, r.id FROM events e
      JOIN tbv_rules r ON r.source_format = e.source_format AND r.rule_set = 'marker' AND r.match = 'kind'
                      AND r.value = e.kind
      UNION ALL
      SELECT e.event_id, e.session_id, e.seq, r.id FROM events e
      -- (the labels a marker rule names, first: joined with every user event on event_id, the optimizer joined
      -- them all before the rules, 1.3-1.8 CPU s at 10M generated events, against 0.01. Found by their codes: a
      -- join with tbv_marker_codes, whose range DuckDB applies to the scan of the codes; a rule without a code
      -- has its string in user_labels_uncoded)
      JOIN (SELECT n.event_id, m.origin_rule FROM user_labels_narrow n JOIN tbv_marker_codes m USING (code)
            UNION ALL
            SELECT event_id, origin_rule FROM user_labels_uncoded
            WHERE origin_rule IN (SELECT value FROM tbv_rules WHERE rule_set = 'marker' AND match = 'rule')) l
        USING (event_id)
      JOIN tbv_rules r ON r.source_format = e.source_format AND r.rule_set = 'marker' AND r.match = 'rule'
                      AND r.value = l.origin_rule
      WHERE e.role = 'user')
GROUP BY event_id;

-- the first marker record after each assistant reply: each marker's previous reply (a user/tool marker
-- has it in tbv_prev.prev_seq, the reply's seq; any other finds it by an as-of join against the
-- replies of the sessions that hold such a marker), then every user/tool record with the same previous reply at
-- or after that marker sees it (the reply by its seq in the session: seq is unique in a session)
-- (tbv_prev: turn_boundaries' stored columns, turn_boundaries_variants_prev.sql; the view's decisions are not read here)
CREATE OR REPLACE TEMP TABLE tbv_marks AS
WITH own AS (
    SELECT o.*, b.event_id IS NOT NULL AS in_tb, b.prev_seq
    FROM tbv_own o LEFT JOIN (SELECT event_id, prev_seq FROM tbv_prev) b USING (event_id)
), mp AS (
    SELECT session_id, seq, own_marker, prev_seq AS reply_seq FROM own WHERE in_tb
    UNION ALL
    SELECT o.session_id, o.seq, o.own_marker, a.seq AS reply_seq
    FROM (SELECT * FROM own WHERE NOT in_tb) o
    ASOF LEFT JOIN (SELECT session_id, seq FROM events
                    WHERE role = 'assistant' AND session_id IN (SELECT session_id FROM own WHERE NOT in_tb)) a
      ON a.session_id = o.session_id AND o.seq > a.seq
), firsts AS (
    SELECT session_id, coalesce(reply_seq, -1) AS reply_seq, min(seq) AS first_seq, arg_min(own_marker, seq) AS marker
    FROM mp GROUP BY ALL
)
SELECT b.event_id, f.marker
FROM tbv_prev b
JOIN firsts f ON f.session_id = b.session_id AND f.reply_seq = coalesce(b.prev_seq, -1) AND f.first_seq <= b.seq;

-- (declared first so that event_id is stored uncompressed, as in turn_boundaries.sql)
CREATE OR REPLACE TABLE turn_boundary_variants_marked (
    event_id VARCHAR USING COMPRESSION uncompressed, session_id VARCHAR, seq INTEGER, marker_seen BOOLEAN,
    marker_id VARCHAR, known_automatic BOOLEAN, marker_decided_by VARCHAR, marker_decision VARCHAR,
    marker_error VARCHAR, notif_decided_by VARCHAR, notif_decision VARCHAR, notif_error VARCHAR,
    both_decided_by VARCHAR, both_decision VARCHAR, both_error VARCHAR, threshold DOUBLE);

INSERT INTO turn_boundary_variants_marked
-- (the marked rows are found first from the columns the joins need, then the view's decisions are read for
-- them alone: turn_boundaries is a view that computes decided_by and decision, 0.2 CPU s over every row at
-- 2M generated events when none is marked)
WITH c AS (
    SELECT b.event_id, coalesce(st.id, k.marker) AS marker_id, a.id IS NOT NULL AS known_automatic
    FROM (SELECT event_id, source_format, prev_reply_status, origin_rule FROM turn_boundaries_by_seq WHERE role = 'user') b
    LEFT JOIN tbv_marks k USING (event_id)
    -- (rule_set, match, value) is unique in the rules (checked when they are loaded): no row is repeated
    LEFT JOIN tbv_rules st ON st.source_format = b.source_format AND st.rule_set = 'marker'
                          AND st.match = 'reply_status' AND st.value = b.prev_reply_status
    LEFT JOIN tbv_rules a ON a.source_format = b.source_format AND a.rule_set = 'automatic' AND a.match = 'rule'
                         AND a.value = b.origin_rule
    WHERE coalesce(st.id, k.marker) IS NOT NULL OR a.id IS NOT NULL
), d AS (
    SELECT b.event_id, b.session_id, b.seq, b.role, b.decided_by, b.decision, b.starts_request, b.is_human_turn,
           b.threshold, c.marker_id, c.known_automatic
    FROM turn_boundaries_by_seq b JOIN c USING (event_id)
), v AS (
    SELECT d.*, marker_id IS NOT NULL AS marker_seen,
           -- the router's own steps after its header: first / completion / gap / no_time, unchanged
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN decided_by <> 'first' AND marker_id IS NOT NULL THEN 'marker'
                ELSE decided_by END AS marker_decided_by,
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN known_automatic THEN 'notification'
                ELSE decided_by END AS notif_decided_by,
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN known_automatic THEN 'notification'
                WHEN decided_by <> 'first' AND marker_id IS NOT NULL THEN 'marker'
                ELSE decided_by END AS both_decided_by
    FROM d
), dec AS (
    SELECT v.*,
           CASE marker_decided_by WHEN 'marker' THEN 'human' ELSE decision END AS marker_decision,
           CASE notif_decided_by WHEN 'notification' THEN 'continuation' ELSE decision END AS notif_decision,
           CASE both_decided_by WHEN 'marker' THEN 'human' WHEN 'notification' THEN 'continuation'
                ELSE decision END AS both_decision
    FROM v
)
SELECT event_id, session_id, seq, marker_seen, marker_id, known_automatic,
       marker_decided_by, marker_decision, boundary_error(starts_request, is_human_turn, marker_decision) AS marker_error,
       notif_decided_by, notif_decision, boundary_error(starts_request, is_human_turn, notif_decision) AS notif_error,
       both_decided_by, both_decision, boundary_error(starts_request, is_human_turn, both_decision) AS both_error,
       threshold
FROM dec
WHERE marker_id IS NOT NULL OR known_automatic;

DROP TABLE IF EXISTS tbv_marks;
DROP TABLE IF EXISTS tbv_own;
DROP TABLE IF EXISTS tbv_rules;
DROP TABLE IF EXISTS tbv_marker_codes;
DROP VIEW IF EXISTS tbv_prev;
