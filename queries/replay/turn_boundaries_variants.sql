-- Rule variants of the router's turn-boundary order, replayed beside it (issue 15).
-- Inputs: events, user_labels, turn_boundaries (queries/replay/turn_boundaries.sql, any threshold),
-- router_variant_rules (rule_set 'marker' | 'automatic', id, match 'kind' | 'rule' | 'reply_status', value,
-- harness VARCHAR[] or NULL; loaded by stallscan.replay.boundary_variants from stallscan/data/router_variants.toml).
-- The decisions are at turn_boundaries' threshold (its steps the variants keep are taken from it as they are).
-- Output: table turn_boundary_variants, one row per turn_boundaries row:
--   marker_seen      a user-role record with a marker since the previous assistant reply (in seq order, the
--                    record itself included): a marker-labelled record, a marker event kind, or a previous
--                    reply whose completion report is a marker status (cancelled)
--   marker_id        the first such marker's id (the previous reply's status first)
--   known_automatic  the record is of a known automatic kind (its label comes from an [[automatic]] entry)
--   <v>_decided_by / <v>_decision / <v>_error  for v in marker (marker-aware), notif (notification-aware),
--                    both (marker+notification). Orders:
--     marker: header -> first -> marker (human) -> completion -> gap / no_time
--     notif:  header -> notification (continuation) -> first -> completion -> gap / no_time
--     both:   header -> notification -> first -> marker -> completion -> gap / no_time

-- decision vs truth, as in turn_boundaries.sql (defined again so this file runs on a reopened database)
CREATE OR REPLACE TEMP MACRO boundary_error(starts_request, is_human, decision) AS CASE
    WHEN NOT starts_request THEN 'not_request'
    WHEN decision IS NULL THEN NULL
    WHEN is_human AND decision = 'continuation' THEN 'human_as_auto'
    WHEN NOT is_human AND decision = 'human' THEN 'auto_as_human'
    ELSE 'none' END;

CREATE OR REPLACE TEMP MACRO rule_applies(harness, source_format) AS
    harness IS NULL OR len(list_filter(harness, lambda h: starts_with(source_format, h))) > 0;

-- events that are markers themselves (hash joins on the kind and on the label; few rows match)
CREATE OR REPLACE TEMP TABLE tbv_own AS
SELECT event_id, min(id) AS own_marker
FROM (SELECT e.event_id, r.id FROM events e
      JOIN router_variant_rules r ON r.rule_set = 'marker' AND r.match = 'kind' AND r.value = e.kind
      WHERE rule_applies(r.harness, e.source_format)
      UNION ALL
      SELECT e.event_id, r.id FROM events e JOIN user_labels l USING (event_id)
      JOIN router_variant_rules r ON r.rule_set = 'marker' AND r.match = 'rule' AND r.value = l.origin_rule
      WHERE e.role = 'user' AND rule_applies(r.harness, e.source_format))
GROUP BY event_id;

-- the first marker since the previous assistant reply (the record itself included), per user/tool record
CREATE OR REPLACE TEMP TABLE tbv_marks AS
WITH w AS (
    SELECT e.event_id, e.session_id, e.seq, e.role, o.own_marker,
           max(CASE WHEN e.role = 'assistant' THEN e.seq END) OVER (
               PARTITION BY e.session_id ORDER BY e.seq ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_reply_seq
    FROM events e LEFT JOIN tbv_own o USING (event_id)
), m AS (
    SELECT w.*, first_value(own_marker IGNORE NULLS) OVER (
               PARTITION BY session_id, prev_reply_seq ORDER BY seq ROWS UNBOUNDED PRECEDING) AS first_marker
    FROM w
)
SELECT event_id, first_marker FROM m WHERE role IN ('user', 'tool');

CREATE OR REPLACE TABLE turn_boundary_variants AS
WITH d AS (
    SELECT b.event_id, b.session_id, b.seq, b.role, b.decided_by, b.decision, b.gap_s, b.initiator,
           b.prev_reply_status, b.starts_request, b.is_human_turn, b.threshold,
           b.role = 'user' AND coalesce(st.id, k.first_marker) IS NOT NULL AS marker_seen,
           CASE WHEN b.role = 'user' THEN coalesce(st.id, k.first_marker) END AS marker_id,
           b.role = 'user' AND a.id IS NOT NULL AS known_automatic
    FROM turn_boundaries b
    JOIN tbv_marks k USING (event_id)
    LEFT JOIN (SELECT b.event_id, min(r.id) AS id FROM turn_boundaries b
               JOIN router_variant_rules r ON r.rule_set = 'marker' AND r.match = 'reply_status'
                                          AND r.value = b.prev_reply_status
               WHERE rule_applies(r.harness, b.source_format) GROUP BY b.event_id) st USING (event_id)
    LEFT JOIN (SELECT b.event_id, min(r.id) AS id FROM turn_boundaries b
               JOIN router_variant_rules r ON r.rule_set = 'automatic' AND r.match = 'rule' AND r.value = b.origin_rule
               WHERE rule_applies(r.harness, b.source_format) GROUP BY b.event_id) a USING (event_id)
), v AS (
    SELECT d.*,
           -- the router's own steps after its header: first / completion / gap / no_time, unchanged
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN decided_by <> 'first' AND marker_seen THEN 'marker'
                ELSE decided_by END AS marker_decided_by,
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN known_automatic THEN 'notification'
                ELSE decided_by END AS notif_decided_by,
           CASE WHEN decided_by = 'header' THEN 'header'
                WHEN known_automatic THEN 'notification'
                WHEN decided_by <> 'first' AND marker_seen THEN 'marker'
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
ORDER BY session_id, seq;

DROP TABLE IF EXISTS tbv_marks;
DROP TABLE IF EXISTS tbv_own;
