-- Stall replay, step 3: rounds, one row per assistant event, with our turn number and its round_kind.
-- Input: stall_ev, stall_turn_span, stall_atext, stall_nudges, stall_sig_matches (steps 1-2), stall_providers.
-- The signature hits of a reply, in signature order (list_sort on (ord, id): no ordered aggregate)
CREATE OR REPLACE TEMP TABLE stall_sig_hits AS
SELECT rid,
       list_transform(list_sort(list((ord, id)) FILTER (WHERE kind = 'intent')), lambda x: x[2]) AS sig_hits,
       list_transform(list_sort(list((ord, id)) FILTER (WHERE kind <> 'intent')), lambda x: x[2]) AS veto_hits
FROM stall_sig_matches GROUP BY rid;

CREATE OR REPLACE TEMP TABLE stall_model_provider AS
SELECT m.model, arg_min(p.provider, p.ord) AS provider
FROM (SELECT DISTINCT model FROM stall_atext WHERE model IS NOT NULL) m
JOIN stall_providers p ON regexp_matches(m.model, p.regex)
GROUP BY m.model;

CREATE OR REPLACE TABLE rounds AS
WITH base AS (   -- per turn: the rounds and tool rounds of the session before it (running counts)
    SELECT session_id, turn_id, rounds_before, tools_before FROM stall_turn_span
), a AS (   -- a reply's place in its turn, from the session's running counts (no second window pass); narrow,
            -- so it is the small side of the join with the replies' own fields
    SELECT v.rid, v.turn_id, v.round_no,
           v.round_no - t.rounds_before AS round_in_turn,
           -- a tool round earlier in the turn
           v.tool_rounds - (v.n_tool_calls > 0)::INTEGER - t.tools_before > 0 AS after_tool_round
    FROM stall_ev v JOIN base t USING (session_id, turn_id)
    WHERE v.role = 'assistant'
), b AS (
    SELECT x.* EXCLUDE (tail), a.turn_id, a.round_no, a.round_in_turn, a.after_tool_round,
           coalesce(h.sig_hits, []) AS sig_hits, coalesce(h.veto_hits, []) AS veto_hits,
           n.nudge_id, n.nudge_reacts_to, coalesce(n.n_nudges, 0) AS n_nudges,
           coalesce(n.interrupted, false) AS interrupted
    FROM stall_atext x
    JOIN a USING (rid)
    LEFT JOIN stall_sig_hits h USING (rid)
    LEFT JOIN stall_nudges n ON n.session_id = x.session_id AND n.turn_id = a.turn_id AND n.round_no = a.round_no
), c AS (
    SELECT b.*, CASE
        WHEN n_tool_calls > 0 THEN 'tool_round'
        WHEN sentinel_kind IS NOT NULL THEN sentinel_kind
        WHEN interrupted THEN 'cancelled'
        WHEN finish_eff IN ('error', 'content_filter') THEN 'failed'
        WHEN finish_eff = 'cancelled' THEN 'cancelled'
        WHEN blank THEN CASE WHEN finish_eff = 'length' THEN 'truncated' ELSE 'empty' END
        WHEN finish_eff = 'length' THEN 'truncated'
        WHEN finish_eff = 'tool_calls' THEN 'dropped_tool_call'
        WHEN after_tool_round AND len(sig_hits) > 0 AND len(veto_hits) = 0 THEN 'narrated_intent'
        WHEN nudge_reacts_to = 'narrated' THEN 'narrated_intent'
        WHEN nudge_reacts_to IN ('no_tool', 'dropped') THEN 'no_tool'
        ELSE 'final' END AS round_kind
    FROM b
)
SELECT c.event_id, c.session_id, c.source_format, c.seq, c.ts, c.turn_id::INTEGER AS turn_id,
       c.round_in_turn::INTEGER AS round_in_turn, c.model,
       coalesce(c.meta_provider, mp.provider, 'unknown') AS provider,
       c.finish_reason, c.finish_eff, c.n_tool_calls, c.text_chars, c.after_tool_round,
       c.round_kind,
       CASE c.round_kind
           WHEN 'dropped_tool_call' THEN 'finish:' || c.finish_evidence
           WHEN 'narrated_intent' THEN CASE WHEN c.after_tool_round AND len(c.sig_hits) > 0 AND len(c.veto_hits) = 0
                                            THEN c.sig_hits[1] ELSE 'nudge:' || c.nudge_id END
           WHEN 'no_tool' THEN 'nudge:' || c.nudge_id END AS signature,
       c.sig_hits, c.veto_hits, c.nudge_id, c.nudge_reacts_to, c.n_nudges::INTEGER AS n_nudges, c.interrupted,
       c.excerpt
FROM c LEFT JOIN stall_model_provider mp USING (model);
