-- Stall replay, step 3: rounds, one row per assistant event, with our turn number and its round_kind, stored as
-- rounds_core: the columns every reply has (its key, turn, harness, provider, tool calls, round_kind, signature; not its
-- model and finish reason, the event's own, which the views read from it), hit_key, the
-- number of its tail and capped length's signature hits (NULL: none), and last_in_turn (a bit of `codes`), whether it is its turn's
-- last reply (queries/replay/stall_turns.sql reads those rows only). The columns that are empty on most replies are
-- stored apart, only where they are set (queries/replay/stall_rounds_side.sql: the hit lists once per session and
-- hit_key, the nudges after a round, a turn's background / approval-mode evidence), and the view rounds_narrow
-- (queries/replay/stall_rounds_narrow_view.sql) puts them back; the view `rounds` adds what it reads or computes
-- from the reply's own event (queries/replay/stall_rounds_view.sql: event_id, ts, finish_eff, text_chars, excerpt).
-- Storing a column costs per row even where it is empty (at 2M generated events about 0.03 CPU s for an integer,
-- 0.05-0.14 s for a string or a list): the ten sparse columns were about a third of this table's write.
-- The reply's round kind, harness (source_format) and provider are stored as 1-based codes into the fixed lists
-- below, packed in one INTEGER, `codes` (0: no code): round kind in bits 0-7 (RK: ['tool_round', 'final',
-- 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty', 'truncated', 'cancelled', 'failed']), source_format
-- 8-15 (turn_boundaries.sql's list), provider 16-23, and the two flags after_tool_round (bit 24) and last_in_turn
-- (bit 25; each flag's column cost 0.025-0.035 CPU s to write at 2M); the readers decode with the same lists
-- (tests/functional/test_rounds_codes.py holds them equal). The signature (NULL on all but the stalls) and a value
-- no list holds (a harness added later, a provider a log names, a sentinel kind added to the library) are kept in
-- `uncoded`, a JSON object, NULL on every other row. The three strings and the NULL signature cost about 0.28 CPU s
-- to write at 2M generated events (1.15M replies), the packed codes about 0.03: the statement 0.83 -> 0.65 CPU s
-- (docs/replay-scan.md, "codes16").
-- Input: events, stall_replies, stall_turn_evidence, stall_sentinel_keys, stall_tail_caps, stall_nudges,
-- stall_tail_matches (steps 1-2), stall_signatures, stall_settings, stall_providers. A reply is narrated_intent by
-- its text when an intent signature matched, no question / statement signature did, no done signature did unless an
-- intent that reads the whole last sentence (`decides`) matched (the last sentence decides), no wait signature did
-- in a turn that started background work before it, and, with no tool round before it in the turn, the turn is not
-- in a plan-approval mode (intent_signatures.toml header; the same rule as stallscan/replay/stalls_ref.py
-- classify_rounds).
-- The signature hits of the replies with one tail and capped length (stall_tail_caps: the tail's matches,
-- stall_tail_matches, a signature with max_chars only when the reply's whole text is no longer), in signature order
-- (list_sort on (ord, id): no ordered aggregate), numbered (hit_key: any numbering, one replay's rows agree)
CREATE OR REPLACE TEMP TABLE stall_sig_hits AS
WITH m AS (
    SELECT c.tail, c.cap, m.ord, m.id, m.kind, s.decides
    FROM stall_tail_caps c JOIN stall_tail_matches m USING (tail) JOIN stall_signatures s ON s.id = m.id
    WHERE s.max_chars IS NULL OR c.cap <= s.max_chars
)
SELECT m.tail, m.cap,
       list_transform(list_sort(list((m.ord, m.id)) FILTER (WHERE m.kind = 'intent')), lambda x: x[2]) AS sig_hits,
       list_transform(list_sort(list((m.ord, m.id)) FILTER (WHERE m.kind NOT IN ('intent', 'wait'))), lambda x: x[2])
           AS veto_hits,
       list_transform(list_sort(list((m.ord, m.id)) FILTER (WHERE m.kind = 'wait')), lambda x: x[2]) AS wait_hits,
       -- the vetoes that count: any question / statement; a done one unless a `decides` intent matched
       count(*) FILTER (WHERE m.kind IN ('question', 'statement')) > 0
           OR (count(*) FILTER (WHERE m.kind = 'done') > 0
               AND NOT coalesce(bool_or(m.kind = 'intent' AND m.decides), false)) AS vetoed,
       (row_number() OVER ())::INTEGER AS hit_key
FROM m GROUP BY m.tail, m.cap;

CREATE OR REPLACE TEMP TABLE stall_model_provider AS
SELECT m.model, arg_min(p.provider, p.ord) AS provider,
       list_position(['unknown', 'anthropic', 'openai', 'google', 'qwen', 'nvidia', 'deepseek', 'meta'],
                     arg_min(p.provider, p.ord))::UTINYINT AS c_provider
FROM (SELECT DISTINCT model FROM events WHERE role = 'assistant' AND model IS NOT NULL) m
JOIN stall_providers p ON regexp_matches(m.model, p.regex)
GROUP BY m.model;

-- The replies beside their scan rows (stall_replies, in storage order: stallscan/replay/stall_scans.py) in four parts
-- by rowid, each a POSITIONAL JOIN of the part's replies with the part's scan rows; each row checks that its rowid is
-- the one the scan wrote (a reply without its row, or a row without its reply, fails). A positional join runs on one
-- thread, so one over every reply ran this statement and its write on one (at 10M generated events, beside the
-- boundaries replay, 2.8 s wall against 1.7 for a hash join on the rowid); four parts run on up to four. The hash
-- join it replaces cost more: at 2M generated events, one thread, the statement 0.86-0.88 -> 0.81 CPU s; at 10M, two
-- threads, 4.6-4.9 -> 4.1 CPU s (the join alone about 0.8 of them).
SET VARIABLE stall_reply_part = (SELECT coalesce(max(rowid) // 4 + 1, 1) FROM events);

CREATE OR REPLACE TEMP MACRO stall_reply_part(i) AS TABLE
SELECT e.*, s.rid AS scan_rid, s.turn_id, s.place >> 2 AS round_in_turn, (s.place & 2) <> 0 AS after_tool_round,
       (s.place & 1) <> 0 AS last_in_turn
FROM (SELECT rowid AS rid, session_id, seq, source_format, model, finish_reason, n_tool_calls, finish_norm, meta, text
      FROM events WHERE role = 'assistant'
       AND rowid >= i * getvariable('stall_reply_part') AND rowid < (i + 1) * getvariable('stall_reply_part')) e
POSITIONAL JOIN (FROM stall_replies
                 WHERE rid >= i * getvariable('stall_reply_part') AND rid < (i + 1) * getvariable('stall_reply_part')) s;

-- Every join below builds its hash table on the side written on the right: lookups smaller than the replies (a
-- positional scan's row estimate is about 0, so the optimizer built the lookups' joins on the replies: at 2M
-- generated events 2.3 against 3.0 CPU s). Reset after the statement.
SET disabled_optimizers = 'build_side_probe_side';

-- The rows are written in any order (this connection's setting only: SET SESSION; reset after the statement).
-- With the insertion order kept, DuckDB writes a source without batch indexes (a positional scan) from one
-- thread and runs a UNION ALL's branches one after the other, so the four parts above ran on one thread, the
-- write included: at 10M generated events 2.7-2.8 CPU s in 2.8-3.1 s of wall, against the same CPU in 1.4 s with
-- the order free (docs/replay-scan.md, "stall17"). No reader relies on rounds_core's storage order (the walk
-- orders its rows, the others join or aggregate; a parallel write's order already varied, "stall10").
SET SESSION preserve_insertion_order = false;

CREATE OR REPLACE TABLE rounds_core AS
WITH x0 AS (   -- a reply, its turn and place in it (counted by the scan: stall_replies), and its own fields
    SELECT rid, session_id, seq, source_format, model, finish_reason, n_tool_calls,
           CASE WHEN rid = scan_rid THEN turn_id ELSE error('stall_replies is not aligned with the replies') END
               AS turn_id,
           round_in_turn, after_tool_round, last_in_turn,
           finish_norm,
           -- meta's keys phase, provider, model_provider, providerId (meta ->> each: one parse of meta, not four),
           -- parsed only when its text names one of them (every key ingest writes is a plain ASCII literal, never
           -- escaped: a meta without 'phase' or 'rovider' in it has none of the four; at 2M generated events 0.15
           -- of the statement's 0.6 CPU s of computing)
           CASE WHEN contains(meta, 'phase') OR contains(meta, 'rovider')
                THEN json_extract_string(meta, ['phase', 'provider', 'model_provider', 'providerId'])
                ELSE [NULL, NULL, NULL, NULL]::VARCHAR[] END AS mk,
           CASE WHEN n_tool_calls = 0 THEN stall_strip(text) END AS stripped  -- (a text-only reply's only)
    FROM (FROM stall_reply_part(0) UNION ALL FROM stall_reply_part(1) UNION ALL FROM stall_reply_part(2)
          UNION ALL FROM stall_reply_part(3))
), x AS (      -- blank; the tail and capped length its signature hits are found by (stall_rounds_prep.sql's macros)
    SELECT x0.* EXCLUDE (finish_norm, mk),
           coalesce(finish_norm, CASE mk[1] WHEN 'commentary' THEN 'tool_calls' WHEN 'final_answer' THEN 'stop' END)
               AS finish_eff,
           coalesce(finish_reason, 'phase=' || mk[1]) AS finish_evidence,
           coalesce(mk[2], mk[3], mk[4]) AS meta_provider,
           n_tool_calls = 0 AND coalesce(stripped, '') = '' AS blank,
           stall_tail(stripped) AS tail, stall_cap(stripped) AS cap
    FROM x0
), xs AS (     -- the sentinels whose key the stripped text starts with (stall_sentinel_keys)
    SELECT x.*, sk.entries AS skey_entries
    FROM x LEFT JOIN stall_sentinel_keys sk ON sk.skey = left(x.stripped, getvariable('stall_sentinel_key'))
), b AS (
    SELECT x.* EXCLUDE (tail, cap, stripped, skey_entries),
           -- the first sentinel (by ord) the stripped text is (stall_rounds_prep.sql: its key's entries, then any
           -- contains one; NULL: none)
           CASE WHEN skey_entries IS NOT NULL OR len(getvariable('stall_sentinel_any')) > 0
                THEN list_sort(list_filter(coalesce(skey_entries, []) || getvariable('stall_sentinel_any'),
                                           lambda p: CASE p.match WHEN 'exact' THEN x.stripped = p.text
                                                                  WHEN 'prefix' THEN starts_with(x.stripped, p.text)
                                                                  ELSE contains(x.stripped, p.text) END))[1].reacts_to
                END AS sentinel_kind,
           coalesce(h.sig_hits, []) AS sig_hits, coalesce(h.veto_hits, []) AS veto_hits,
           coalesce(h.wait_hits, []) AS wait_hits, coalesce(h.vetoed, false) AS vetoed, h.hit_key,
           CASE WHEN ev.bg_seq < x.seq THEN ev.bg_id END AS background,
           CASE WHEN ev.mode_seq < x.seq THEN ev.mode_id END AS approval_mode,
           n.nudge_id, n.nudge_reacts_to, coalesce(n.n_nudges, 0) AS n_nudges,
           coalesce(n.interrupted, false) AS interrupted
    FROM xs x
    LEFT JOIN stall_sig_hits h ON h.tail = x.tail AND h.cap = x.cap
    LEFT JOIN stall_nudges n USING (rid)
    LEFT JOIN stall_turn_evidence ev ON ev.session_id = x.session_id AND ev.turn_id = x.turn_id
), bb AS (
    SELECT b.*, len(sig_hits) > 0 AND NOT vetoed AND (len(wait_hits) = 0 OR background IS NULL)
                AND (after_tool_round OR approval_mode IS NULL) AS by_text
    FROM b
), c AS (     -- the round kind as its code into RK (below); a sentinel kind RK does not hold: NULL, kept as text
    SELECT bb.*, CASE
        WHEN n_tool_calls > 0 THEN 1
        WHEN sentinel_kind IS NOT NULL THEN list_position(['tool_round', 'final', 'dropped_tool_call', 'no_tool',
                                                           'narrated_intent', 'empty', 'truncated', 'cancelled',
                                                           'failed'], sentinel_kind)
        WHEN interrupted THEN 8
        WHEN finish_eff IN ('error', 'content_filter') THEN 9
        WHEN finish_eff = 'cancelled' THEN 8
        WHEN blank THEN CASE finish_eff WHEN 'length' THEN 7 WHEN 'tool_calls' THEN 3 ELSE 6 END
        WHEN finish_eff = 'length' THEN 7
        WHEN finish_eff = 'tool_calls' THEN 3
        WHEN by_text THEN 5
        WHEN nudge_reacts_to = 'narrated' THEN 5
        WHEN nudge_reacts_to IN ('no_tool', 'dropped') THEN 4
        ELSE 2 END::UTINYINT AS c_round_kind
    FROM bb
), d AS (
    SELECT c.*, coalesce(c.meta_provider, mp.provider, 'unknown') AS provider,
           CASE WHEN c.meta_provider IS NOT NULL
                THEN list_position(['unknown', 'anthropic', 'openai', 'google', 'qwen', 'nvidia', 'deepseek', 'meta'],
                                   c.meta_provider)
                WHEN mp.provider IS NULL THEN 1 ELSE mp.c_provider END::UTINYINT AS c_provider,
           list_position(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                          'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                          'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                          'phoenix_spans', 'litellm'], c.source_format)::UTINYINT AS c_source_format,
           CASE c.c_round_kind
               WHEN 3 THEN 'finish:' || c.finish_evidence
               WHEN 5 THEN CASE WHEN c.by_text THEN c.sig_hits[1] ELSE 'nudge:' || c.nudge_id END
               WHEN 4 THEN 'nudge:' || c.nudge_id END AS signature
    FROM c LEFT JOIN stall_model_provider mp USING (model)
)
SELECT d.session_id, d.seq, d.turn_id::INTEGER AS turn_id, d.round_in_turn::INTEGER AS round_in_turn,
       d.n_tool_calls,
       coalesce(d.c_round_kind, 0)::INTEGER | (coalesce(d.c_source_format, 0)::INTEGER << 8)
           | (coalesce(d.c_provider, 0)::INTEGER << 16) | (d.after_tool_round::INTEGER << 24)
           | (d.last_in_turn::INTEGER << 25) AS codes,
       d.hit_key,
       -- (the signature and the values no list holds, on the few rows that have one; NULL on every other row)
       CASE WHEN d.signature IS NOT NULL OR d.c_round_kind IS NULL OR d.c_source_format IS NULL
                 OR d.c_provider IS NULL
            THEN json_object('source_format', d.source_format, 'provider', d.provider,
                             'round_kind', CASE WHEN d.c_round_kind IS NULL THEN d.sentinel_kind END,
                             'signature', d.signature)::VARCHAR END AS uncoded
FROM d;

RESET disabled_optimizers;

RESET SESSION preserve_insertion_order;
