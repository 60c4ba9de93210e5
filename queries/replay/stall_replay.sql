-- Replay the bounded re-prompt rule over `rounds` and write `stalls` (one row per stalled round).
-- Inputs: rounds_core, rounds_nudges (a walked round's nudge), stall_walk_scan (stallscan/replay/stall_scans.py), events (the walked replies' event_id, ts,
-- model, finish reason and excerpt, by session_id and seq: computed as the view `rounds` computes them, queries/replay/stall_rounds_view.sql).
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
-- The running counts and the per-episode facts are segmented scans over rounds in (session, seq) order
-- (stallscan/replay/stall_scans.py over scan_stall_walk.sql's columns: the temp table stall_walk_scan, one row per
-- round of a turn that holds a stall, joined to rounds_core on its rowid; only those turns are walked).
CREATE OR REPLACE TEMP TABLE stall_walk AS
WITH g AS (
    SELECT a.event_id, a.ts, a.model, a.finish_reason, r.* EXCLUDE (codes, uncoded),
           -- (the stored codes as the strings they stand for: the lists of queries/replay/stall_rounds.sql)
           coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                     'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                     'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                     'phoenix_spans', 'litellm'][nullif((r.codes >> 8) & 255, 0)], r.uncoded ->> 'source_format')
               AS source_format,
           coalesce(['unknown', 'anthropic', 'openai', 'google', 'qwen', 'nvidia', 'deepseek', 'meta'][
                        nullif((r.codes >> 16) & 255, 0)], r.uncoded ->> 'provider') AS provider,
           coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty', 'truncated',
                     'cancelled', 'failed'][nullif(r.codes & 255, 0)], r.uncoded ->> 'round_kind') AS round_kind,
           r.uncoded ->> 'signature' AS signature, n.nudge_id,
           CASE WHEN length(trim(a.text, chr(32) || chr(9) || chr(10) || chr(13))) <= 240
                THEN trim(a.text, chr(32) || chr(9) || chr(10) || chr(13))
                ELSE '…' || right(trim(a.text, chr(32) || chr(9) || chr(10) || chr(13)), 239) END AS excerpt,
           -- (round kind codes: 1 tool_round, 2 final, 3 dropped_tool_call, 4 no_tool, 5 narrated_intent)
           r.codes & 255 IN (3, 4, 5) AS is_stall,
           CASE WHEN r.codes & 255 = 5 THEN 'narrated' WHEN r.codes & 255 IN (3, 4) THEN 'dropped' END AS family,
           CASE WHEN r.codes & 255 IN (1, 2) THEN 1 ELSE 0 END AS brk,
           s.delivered, s.episode,
           CASE WHEN r.codes & 255 IN (3, 4, 5) THEN s.stall_index END AS stall_index,
           CASE s.resolved WHEN 0 THEN 'tool_round' WHEN 1 THEN 'final' END AS resolved_by,
           s.episode_nudges, s.ends_on_stall, s.delivered_nudged
    FROM rounds_core r JOIN stall_walk_scan s ON r.rowid = s.rid
    LEFT JOIN rounds_nudges n ON n.session_id = r.session_id AND n.seq = r.seq
    JOIN events a ON a.session_id = r.session_id AND a.seq = r.seq AND a.role = 'assistant'
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
