-- Stall replay, step 3: rounds, one row per assistant event, with our turn number and its round_kind.
-- Input: stall_ev, stall_nudges, stall_sig_matches (steps 1-2), stall_prompts, stall_providers.
CREATE OR REPLACE TEMP TABLE stall_sig_hits AS
SELECT event_id,
       list(id ORDER BY ord) FILTER (WHERE kind = 'intent') AS sig_hits,
       list(id ORDER BY ord) FILTER (WHERE kind <> 'intent') AS veto_hits
FROM stall_sig_matches GROUP BY event_id;

CREATE OR REPLACE TEMP TABLE stall_model_provider AS
SELECT m.model, arg_min(p.provider, p.ord) AS provider
FROM (SELECT DISTINCT model FROM stall_ev WHERE model IS NOT NULL) m
JOIN stall_providers p ON regexp_matches(m.model, p.regex)
GROUP BY m.model;

CREATE OR REPLACE TABLE rounds AS
WITH a AS (
    SELECT v.*,
           row_number() OVER t AS round_in_turn,
           coalesce(bool_or(v.n_tool_calls > 0) OVER (t ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), false)
             AS after_tool_round,
           coalesce(v.finish_norm, CASE v.meta ->> 'phase' WHEN 'commentary' THEN 'tool_calls'
                                                           WHEN 'final_answer' THEN 'stop' END) AS finish_eff,
           coalesce(v.finish_reason, 'phase=' || (v.meta ->> 'phase')) AS finish_evidence
    FROM stall_ev v
    WHERE v.role = 'assistant'
    WINDOW t AS (PARTITION BY v.session_id, v.turn_id ORDER BY v.seq, v.event_id)
), b AS (
    SELECT a.*,
           (SELECT arg_min(p.reacts_to, p.ord) FROM stall_prompts p WHERE p.role = 'sentinel'
              AND CASE p.match WHEN 'exact' THEN a.stripped = p.text
                               WHEN 'prefix' THEN starts_with(a.stripped, p.text)
                               ELSE contains(a.stripped, p.text) END) AS sentinel_kind,
           coalesce(h.sig_hits, []) AS sig_hits, coalesce(h.veto_hits, []) AS veto_hits,
           n.nudge_id, n.nudge_reacts_to, coalesce(n.n_nudges, 0) AS n_nudges,
           coalesce(n.interrupted, false) AS interrupted
    FROM a
    LEFT JOIN stall_sig_hits h USING (event_id)
    LEFT JOIN stall_nudges n ON n.session_id = a.session_id AND n.turn_id = a.turn_id AND n.round_no = a.round_no
), c AS (
    SELECT b.*, CASE
        WHEN n_tool_calls > 0 THEN 'tool_round'
        WHEN sentinel_kind IS NOT NULL THEN sentinel_kind
        WHEN interrupted THEN 'cancelled'
        WHEN finish_eff IN ('error', 'content_filter') THEN 'failed'
        WHEN finish_eff = 'cancelled' THEN 'cancelled'
        WHEN coalesce(stripped, '') = '' THEN CASE WHEN finish_eff = 'length' THEN 'truncated' ELSE 'empty' END
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
       coalesce(c.meta ->> 'provider', c.meta ->> 'model_provider', c.meta ->> 'providerId', mp.provider, 'unknown') AS provider,
       c.finish_reason, c.finish_eff, c.n_tool_calls, length(c.stripped) AS text_chars, c.after_tool_round,
       c.round_kind,
       CASE c.round_kind
           WHEN 'dropped_tool_call' THEN 'finish:' || c.finish_evidence
           WHEN 'narrated_intent' THEN CASE WHEN c.after_tool_round AND len(c.sig_hits) > 0 AND len(c.veto_hits) = 0
                                            THEN c.sig_hits[1] ELSE 'nudge:' || c.nudge_id END
           WHEN 'no_tool' THEN 'nudge:' || c.nudge_id END AS signature,
       c.sig_hits, c.veto_hits, c.nudge_id, c.nudge_reacts_to, c.n_nudges::INTEGER AS n_nudges, c.interrupted,
       CASE WHEN length(c.stripped) <= 240 THEN c.stripped ELSE '…' || right(c.stripped, 239) END AS excerpt
FROM c LEFT JOIN stall_model_provider mp USING (model)
ORDER BY c.session_id, c.seq, c.event_id;
