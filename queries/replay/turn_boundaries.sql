-- Replay the router's turn-boundary decision for every user-role event (and tool result).
-- Inputs: events, user_labels_narrow, user_labels_rules and user_labels_uncoded (the labels as codes, stallscan.labels), tb_scan (a temp
-- table, stallscan/replay/scan_bounds.py), the macros label_tool_result and label_default_code (label_structural.sql).
-- Parameters: threshold (seconds, DOUBLE), complete (BOOLEAN: user_labels
-- holds one row per user / tool event, queries/replay/turn_boundaries_labels.sql).
-- Output: table turn_boundaries_narrow (the stored columns; the view turn_boundaries over it,
-- queries/replay/turn_boundaries_view.sql, computes the decisions). Decision order:
--   1. header:     an x-initiator value (user -> human, agent -> continuation)
--   2. first:      no earlier assistant reply in the session -> human (a fresh conversation)
--   3. completion: previous reply not final (empty / truncated / cancelled / failed / tool_calls) -> continuation
--   4. gap:        after a final reply, gap_s >= threshold -> human, else continuation
--      no_time:    after a final reply but no trustworthy gap (a ts_quality not per_message, a missing
--                  timestamp, or a negative gap from clock skew) -> human, decided by the rules that do
--                  not need time (a user message after a final reply opens a turn); counted separately.
-- Also the two simpler policies: gap-only (ignores completion reports; NULL when the log gives no gap)
-- and header-only (NULL when no header was logged).

-- The previous reply of each user-role event (the last assistant event of the session with a smaller seq),
-- its completion report and the gap come from stallscan/replay/scan_bounds.py (over scan_boundaries.sql's
-- columns): the temp table tb_scan, one row per event whose role lies between 'tool' and 'user' (the user / tool
-- events, and NULL on another role there, if any) in storage order, read beside those events with POSITIONAL JOIN
-- (each row checks that its rowid is the one the scan fetched, as stall_ev does), then filtered to the user / tool
-- events. The range, not role IN ('user', 'tool'): DuckDB pushes a range into the scan of events, which keeps the
-- two scans one positional scan; the IN list stays a filter above the scan, and a positional join over a filter
-- pairs rows out of order when it runs on several threads ('tb_scan is not aligned'). A table of every event (NULL
-- on the other roles' rows) cost more to write and to read beside them all (docs/replay-scan.md "ing20"). No join
-- on the rowid (a hash join of every user / tool event with its scan row,
-- carrying every column, spilled at 10M events). Nothing is materialised on the way.
-- The labels: most rows carry one of the two labels the labels' structural rules give (a tool result:
-- origin and origin_rule 'tool_result'; a plain message: 'human', 'default_human'; neither human content nor
-- a non-request), and which of the two follows from the event's own role and kind (label_tool_result, the rule
-- user_labels_finish.sql applies: no library entry may take either id, stallscan.replay.labels). So the join's
-- build side holds only the other labels (none on bench_replay's events), and a row it does not find reads
-- its default label from its role and kind: the same columns as the inner join on every label, for a hash
-- table of the few labels a library entry, a queue copy or an override decided (at 10M generated events the
-- INSERT 4.04-4.20 -> 3.13-3.35 CPU s, docs/replay-scan.md "bounds14"). That holds when every user / tool
-- event has its label (the parameter complete: the two counts equal, as derive keeps them); otherwise every label is in
-- the build side and a row without one is left out, as the inner join did.
-- Only what the decisions are computed from is stored: the decided_by / decision / error columns of the
-- three policies, gap_s and is_human_turn are the view's (each stored low-cardinality VARCHAR column cost
-- about 0.07 CPU s per 850k rows to write; the 26-column table 1.7-2.4 CPU s against 0.8-0.9 for this one).
-- prev_status: the previous reply's completion report as a 1-based code into
-- ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'] (NULL: no reply before).
-- origin, source_format, role, kind, origin_rule, ts_quality: likewise 1-based codes (UTINYINT) into the fixed
-- lists below, which the view decodes with the same lists (tests/functional/test_boundaries_view.py holds them
-- equal): a code costs about a third of a low-cardinality VARCHAR column to write (at 2M generated events the
-- INSERT 1.10-1.24 against 0.97-1.12 CPU s). A value no list holds (a format or kind added later, a library rule's
-- id) leaves its code NULL and is kept in the column `extra` as a JSON object of that row's six values and its
-- initiator (bit 58 of codes set), which the view reads instead; on every other row `extra` holds the initiator
-- (the header as logged, NULL on most rows).
-- The seven codes are stored together in one BIGINT, `codes`, a byte each (0: NULL): origin in bits 0-7,
-- source_format 8-15, role 16-23, kind 24-31, origin_rule 32-39, ts_quality 40-47, prev_status 48-55; readers
-- take code k as nullif((codes >> (8 * k)) & 255, 0). Bit 56 is human_content, bit 57 starts_request, bit 58
-- "extra is the JSON object". Every stored column costs about 0.015-0.03 CPU s per 850k rows to write even when
-- it holds a byte or a NULL: at 2M generated events the table's columns 0.37 CPU s as seven code columns, 0.26
-- with them packed (the packed column 0.02); at 10M the two flags about 0.1 CPU s each, the column of NULLs
-- `uncoded` about 0.15 (docs/replay-scan.md, "tbnarrow17").
-- The table is declared first so that its event-id column is stored uncompressed: ids are unique, so
-- DuckDB's dictionary + FSST compression gains little on them and its analysis was the largest single cost of
-- writing the table (about 0.35 CPU s per column per 800k rows; docs/replay-scan.md, "Writing the tables").
-- The previous reply is stored as its seq in the same session (prev_seq, NULL: no reply before), not its event
-- id: the view reads the id from events by (session_id, seq) where it is selected (a 32-character id column
-- fetched by the scan, written to tb_scan and here cost more than that; docs/replay-scan.md, "narrow21").
CREATE OR REPLACE TABLE turn_boundaries_narrow (
    session_id VARCHAR, seq INTEGER, event_id VARCHAR USING COMPRESSION uncompressed,
    ts TIMESTAMP WITH TIME ZONE, codes BIGINT, extra VARCHAR,
    prev_seq INTEGER, gap_raw_s DOUBLE, threshold DOUBLE);

-- The hash table of the labels' join is built on user_labels_narrow (its id and code), not on the
-- events' side (its columns): the positional scan's row estimate is about 0, so the optimizer would build
-- on the events (at 10M generated events the INSERT 15-16 against 11-12 CPU s). Reset after the statement
-- (and by stallscan.store.sql.rollback when it fails), as queries/replay/stall_rounds.sql does.
SET disabled_optimizers = 'build_side_probe_side';

INSERT INTO turn_boundaries_narrow
SELECT session_id, seq, event_id, ts,
       coalesce(c_origin, 0)::BIGINT | (coalesce(c_source_format, 0)::BIGINT << 8) | (coalesce(c_role, 0)::BIGINT << 16)
           | (coalesce(c_kind, 0)::BIGINT << 24) | (coalesce(c_origin_rule, 0)::BIGINT << 32)
           | (coalesce(c_ts_quality, 0)::BIGINT << 40) | (coalesce(prev_status, 0)::BIGINT << 48)
           | (((code & 4) <> 0)::BIGINT << 56)           -- human_content
           | (((code & 8) = 0)::BIGINT << 57)            -- starts_request
           | (uncoded::BIGINT << 58) AS codes,           -- extra holds the JSON object
       -- (the initiator as logged, NULL on most rows; on the rare row with a value no list holds, the JSON object
       -- of that row's six values and its initiator)
       CASE WHEN uncoded
            THEN json_object('origin', ['human', 'automatic', 'tool_result'][code & 3], 'source_format', source_format,
                             'role', "role", 'kind', kind,
                             'origin_rule', coalesce(found_rule, ['default_human', 'tool_result'][code >> 5]),
                             'ts_quality', ts_quality, 'initiator', initiator)::VARCHAR
            ELSE initiator END AS extra,
       prev_seq, gap_raw_s, $threshold::DOUBLE AS threshold
FROM (
SELECT *, c_origin IS NULL OR c_source_format IS NULL OR c_role IS NULL OR c_kind IS NULL OR c_origin_rule IS NULL
          OR c_ts_quality IS NULL AS uncoded
FROM (
    SELECT e.session_id, e.seq, e.event_id, e.ts, e.prev_status, e.initiator, e.prev_seq, e.gap_raw_s,
           l.code, f.origin_rule AS found_rule,
           e.source_format, e.role, e.kind, e.ts_quality,
           (l.code & 3)::UTINYINT AS c_origin,
           list_position(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                          'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                          'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                          'phoenix_spans', 'litellm'], e.source_format)::UTINYINT AS c_source_format,
           list_position(['user', 'tool'], e.role)::UTINYINT AS c_role,
           list_position(['message', 'tool_result', 'queued_input', 'context', 'turn_start', 'turn_end',
                          'turn_aborted', 'compaction', 'system'], e.kind)::UTINYINT AS c_kind,
           -- (the labels' rule codes 1 and 2 are this list's: default_human, tool_result; not when overridden)
           CASE WHEN (l.code & 16) = 0 AND (l.code >> 5) IN (1, 2) THEN l.code >> 5 END::UTINYINT AS c_origin_rule,
           list_position(['per_message', 'per_flush', 'per_session', 'none'], e.ts_quality)::UTINYINT AS c_ts_quality
    FROM (SELECT e.event_id, e.session_id, e.seq, e.ts, e.ts_quality, e.role, e.kind, e.source_format, e.initiator,
                 s.prev_status, s.prev_seq, s.gap_raw_s
          FROM (SELECT rowid AS rid, event_id, session_id, seq, ts, ts_quality, "role", kind, source_format, initiator
                FROM events WHERE "role" >= 'tool' AND "role" <= 'user') e
          POSITIONAL JOIN tb_scan s
          WHERE CASE WHEN e.rid = s.rid THEN true ELSE error('tb_scan is not aligned with events') END
            AND e.role IN ('user', 'tool')) e
    -- (the labels' codes, label_structural.sql: 33 and 67 are the two structural defaults; the rule's string is
    -- looked up for the rows of the build side only, and read only where a value has no code: uncoded; a label
    -- with no rule code, code < 32, has its rule in user_labels_uncoded)
    LEFT JOIN (SELECT n.event_id, n.code, true AS found,
                      CASE WHEN n.code < 32 THEN u.origin_rule
                           WHEN (n.code & 16) <> 0 THEN 'override:' || r.rules[n.code >> 5]
                           ELSE r.rules[n.code >> 5] END AS origin_rule
               FROM user_labels_narrow n
               CROSS JOIN (SELECT list(origin_rule ORDER BY code) AS rules FROM user_labels_rules) r
               LEFT JOIN user_labels_uncoded u ON n.code < 32 AND u.event_id = n.event_id
               WHERE NOT $complete::BOOLEAN OR n.code NOT IN (33, 67)) f USING (event_id)
    -- (the label: the one found, else the default its role and kind give)
    CROSS JOIN LATERAL (SELECT coalesce(f.code, label_default_code(e.role, e.kind)) AS code) l
    WHERE f.found OR $complete::BOOLEAN
) c
) u;   -- (no ORDER BY: readers order their own output, and an incremental replay appends anyway)

RESET disabled_optimizers;
