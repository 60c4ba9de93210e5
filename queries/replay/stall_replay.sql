-- Replay the bounded re-prompt rule over `rounds` and write `stalls` (one row per stalled round).
-- Parameters: $retry_bound (dropped_tool_call / no_tool, default 3), $narrated_bound (narrated_intent, default 2).
--
-- Walk per turn, in round order:
--   * an episode is the run of rounds between two "breakers": a landed tool call (tool_round) or a
--     genuine final; stalls of one episode share its outcome;
--   * the dropped counter (dropped_tool_call, no_tool) counts the family's stalls since the last breaker
--     (Hermes `_dropped_toolcall_retries`, reset by stage_tool_call_message and by a genuine turn end);
--   * the narrated counter counts narrated_intent stalls per turn, never reset inside it (Hermes
--     `codex_ack_continuations`, "max 2 per turn");
--   * would_do = 're-prompt' while the family's index <= its bound, else 'deliver';
--   * outcome: the episode ended with a tool round -> recovered; with a genuine final -> answered;
--     the turn ended on the stall itself -> exhausted when an earlier stall of the episode was nudged,
--     abandoned when the delivered stall was nudged (and nothing answered), else silent_plan_as_answer;
--     the turn ended on an empty / truncated / failed round after the stall -> abandoned.
CREATE OR REPLACE TEMP TABLE stall_walk AS
WITH f AS (
    SELECT r.*,
           r.round_kind IN ('dropped_tool_call', 'no_tool', 'narrated_intent') AS is_stall,
           CASE WHEN r.round_kind = 'narrated_intent' THEN 'narrated'
                WHEN r.round_kind IN ('dropped_tool_call', 'no_tool') THEN 'dropped' END AS family,
           CASE WHEN r.round_kind IN ('tool_round', 'final') THEN 1 ELSE 0 END AS brk,
           row_number() OVER (PARTITION BY r.session_id, r.turn_id ORDER BY r.seq DESC) = 1 AS delivered
    FROM rounds r
    -- only turns with a stall need the walk (stalls are rare: the windows below run on a small part)
    SEMI JOIN (SELECT DISTINCT session_id, turn_id FROM rounds
               WHERE round_kind IN ('dropped_tool_call', 'no_tool', 'narrated_intent')) s USING (session_id, turn_id)
), e AS (
    SELECT f.*,
           sum(brk) OVER (PARTITION BY session_id, turn_id ORDER BY seq ROWS UNBOUNDED PRECEDING) - brk AS episode
    FROM f
), g AS (
    SELECT e.*,
           CASE WHEN family = 'dropped' THEN sum(CASE WHEN family = 'dropped' THEN 1 ELSE 0 END) OVER
                    (PARTITION BY session_id, turn_id, episode ORDER BY seq ROWS UNBOUNDED PRECEDING)
                WHEN family = 'narrated' THEN sum(CASE WHEN family = 'narrated' THEN 1 ELSE 0 END) OVER
                    (PARTITION BY session_id, turn_id ORDER BY seq ROWS UNBOUNDED PRECEDING) END AS stall_index,
           max(CASE WHEN brk = 1 THEN round_kind END) OVER (PARTITION BY session_id, turn_id, episode) AS resolved_by,
           sum(CASE WHEN is_stall AND nudge_id IS NOT NULL THEN 1 ELSE 0 END) OVER
               (PARTITION BY session_id, turn_id, episode) AS episode_nudges,
           bool_or(delivered AND is_stall) OVER (PARTITION BY session_id, turn_id, episode) AS ends_on_stall,
           bool_or(delivered AND is_stall AND nudge_id IS NOT NULL) OVER (PARTITION BY session_id, turn_id, episode) AS delivered_nudged
    FROM e
)
SELECT g.*,
       CASE WHEN family = 'dropped' THEN CASE WHEN stall_index <= $retry_bound THEN 're-prompt' ELSE 'deliver' END
            WHEN family = 'narrated' THEN CASE WHEN stall_index <= $narrated_bound THEN 're-prompt' ELSE 'deliver' END
       END AS would_do,
       CASE WHEN NOT is_stall THEN NULL
            WHEN resolved_by = 'tool_round' THEN 'recovered'
            WHEN resolved_by = 'final' THEN 'answered'
            WHEN ends_on_stall AND delivered_nudged THEN 'abandoned'
            WHEN ends_on_stall AND episode_nudges > 0 THEN 'exhausted'
            WHEN ends_on_stall THEN 'silent_plan_as_answer'
            ELSE 'abandoned' END AS outcome
FROM g;

CREATE OR REPLACE TABLE stalls AS
SELECT session_id, turn_id, seq, event_id, ts, source_format, model, provider, round_kind, signature,
       finish_reason, stall_index::INTEGER AS stall_index, would_do,
       nudge_id IS NOT NULL AS nudged, nudge_id, episode::INTEGER AS episode,
       episode_nudges::INTEGER AS episode_nudges, delivered, outcome, excerpt
FROM stall_walk WHERE is_stall;
