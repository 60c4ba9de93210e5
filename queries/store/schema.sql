-- stallscan canonical schema (version 2: stallscan.SCHEMA_VERSION).
-- Runnable as-is in the DuckDB CLI: `duckdb stallscan.duckdb < queries/store/schema.sql`.
-- Every column is documented here and in README.md ("The events table").

CREATE TABLE IF NOT EXISTS stallscan_meta (
    key   VARCHAR PRIMARY KEY,
    value VARCHAR
);

-- One row per message-level event, whatever format it came from.
-- The long texts, the tool calls and the random ids are stored uncompressed: DuckDB otherwise tries
-- dictionary and FSST on every segment it writes and gains little on them (texts over a few KB are
-- never compressed; hex and uuid ids barely are). Writing 1 GB Claude's 340k events into a fresh file:
-- 1.9-2.0 s CPU instead of 3.2-3.4 s, file 658 MiB instead of 610 (+8 %; docs/benchmarks.md).
-- `meta` too: DuckDB 2.0's dict_fsst took 0.30 CPU s to write those events' meta (17 MiB), uncompressed 0.15 s
-- (57 MiB: the file +6 %), and a scan of it is no slower (docs/benchmarks.md "ing30").
CREATE TABLE IF NOT EXISTS events (
    event_id       VARCHAR NOT NULL USING COMPRESSION uncompressed,  -- stable id: md5(file | line | part); same input path+line => same id
    source_format  VARCHAR NOT NULL,   -- claude_code / codex / openai_chat / ...
    file           VARCHAR NOT NULL,   -- absolute path of the file as the user gave it
    line           INTEGER NOT NULL,   -- 1-based line of the event's first record (JSON array files: element position)
    last_line      INTEGER NOT NULL,   -- line of the event's last record (a reply ends at its last record)
    part           INTEGER NOT NULL,   -- 0, or the index of the message inside a multi-message record
    n_records      INTEGER NOT NULL,   -- input records merged into this event (Claude split replies, Codex pairs)
    session_id     VARCHAR NOT NULL,   -- conversation id (Claude sessionId, or sessionId/agent-<agentId> for a sidechain; Codex session_meta id; else file stem)
    seq            INTEGER NOT NULL,   -- order inside the session: file order, never timestamp order
    ts             TIMESTAMPTZ,        -- UTC time of the first record, NULL when the log has none
    ts_end         TIMESTAMPTZ,        -- UTC time of the last record (end of a split reply); = ts for one record
    ts_quality     VARCHAR NOT NULL,   -- per_message / per_flush / per_session / none
    role           VARCHAR NOT NULL,   -- user / assistant / tool / system
    kind           VARCHAR NOT NULL,   -- message / tool_result / queued_input / context / turn_start / turn_end / turn_aborted / compaction / system
    text           VARCHAR USING COMPRESSION uncompressed,  -- visible text (text blocks joined by newlines; tool-result text for tool results)
    tool_calls     STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] USING COMPRESSION uncompressed,  -- calls emitted by an assistant event
    n_tool_calls   INTEGER NOT NULL,   -- length of tool_calls (0 when none)
    tool_call_id   VARCHAR USING COMPRESSION uncompressed,  -- for tool results: the call they answer
    finish_reason  VARCHAR,            -- raw finish / stop reason as logged
    finish_norm    VARCHAR,            -- stop / tool_calls / length / content_filter / error / cancelled / NULL
    initiator      VARCHAR,            -- x-initiator header value when logged (user / agent), else NULL
    message_id     VARCHAR USING COMPRESSION uncompressed,  -- provider message id (Claude message.id, Codex/Gemini ids)
    record_id      VARCHAR USING COMPRESSION uncompressed,  -- native record id (Claude uuid, ...)
    parent_id      VARCHAR USING COMPRESSION uncompressed,  -- native parent record id (Claude parentUuid, ...)
    turn_id        VARCHAR,            -- harness turn id when logged (Codex turn_id, ...)
    model          VARCHAR,            -- model that wrote the reply (or the session's model)
    is_sidechain   BOOLEAN NOT NULL,   -- sub-agent / sidechain conversation (Claude isSidechain, agent files)
    tokens_in      BIGINT,             -- input tokens of the request behind the reply, when logged
    tokens_out     BIGINT,             -- output tokens of the reply, when logged
    meta           JSON USING COMPRESSION uncompressed  -- format markers for origin labelling: isMeta, isCompactSummary, paired, phase, ...
);

-- One row per ingested file: makes re-ingest incremental and idempotent.
CREATE TABLE IF NOT EXISTS files (
    path           VARCHAR PRIMARY KEY, -- absolute path
    source_format  VARCHAR,             -- detected or forced format; NULL when unrecognised
    compression    VARCHAR,             -- none / gzip / zstd
    size           BIGINT,              -- bytes on disk at the last ingest
    mtime          DOUBLE,              -- modification time (epoch seconds) at the last ingest
    head_hash      VARCHAR,             -- md5 of the first 64 KiB of consumed bytes
    tail_hash      VARCHAR,             -- md5 of the 4 KiB before consumed_bytes (detects rewrites)
    consumed_bytes BIGINT,              -- bytes of (decompressed) input turned into lines so far
    consumed_lines INTEGER,             -- complete lines consumed so far
    ends_newline   BOOLEAN,             -- whether the consumed bytes end with a newline
    pending_bytes  BIGINT,              -- bytes of a truncated last line left for the next ingest
    resume_line    INTEGER,             -- the next ingest of a grown file re-reads from this line ...
    resume_offset  BIGINT,              -- ... at this byte offset (events that may still merge with new lines)
    ctx_session    VARCHAR,             -- session id in force at resume_line (formats that name it once per file)
    ctx_model      VARCHAR,             -- model in force at resume_line (Codex turn_context, Hermes session_meta)
    ctx_turn       VARCHAR,             -- harness turn id in force at resume_line (Codex)
    n_lines        INTEGER,             -- lines (records) accounted: = n_event_lines + n_skipped + n_rejects
    n_event_lines  INTEGER,             -- lines that became (part of) an event
    n_skipped      INTEGER,             -- lines knowingly skipped (by kind in `skipped`)
    n_rejects      INTEGER,             -- lines rejected (rows in `rejects`)
    n_events       INTEGER,             -- events from this file
    status         VARCHAR,             -- ok / unrecognized / empty
    ingested_at    TIMESTAMPTZ
);

-- Knowingly skipped records, one row per line (count them by kind).
CREATE TABLE IF NOT EXISTS skipped (
    file  VARCHAR NOT NULL,
    line  INTEGER NOT NULL,
    kind  VARCHAR NOT NULL    -- e.g. blank_line, progress, summary, file-history-snapshot, mirror:agent_message
);

-- Lines that could not be used, with where and why.
CREATE TABLE IF NOT EXISTS rejects (
    file     VARCHAR NOT NULL,
    line     INTEGER NOT NULL,
    reason   VARCHAR NOT NULL, -- invalid UTF-8 / invalid JSON / not a JSON object / missing field ...
    excerpt  VARCHAR           -- first 120 characters of the line (bytes shown escaped when not UTF-8)
);

CREATE OR REPLACE VIEW sessions AS
SELECT session_id,
       any_value(source_format)                  AS source_format,
       min(file)                                 AS file,
       count(*)                                  AS n_events,
       count(*) FILTER (WHERE role = 'user')     AS n_user,
       count(*) FILTER (WHERE role = 'assistant') AS n_assistant,
       sum(n_tool_calls)                         AS n_tool_calls,
       min(ts)                                   AS first_ts,
       max(ts_end)                               AS last_ts,
       bool_or(is_sidechain)                     AS is_sidechain,
       -- the last model named (as the report and the sweep take it): any_value followed the storage order
       arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
FROM events GROUP BY session_id;

-- Normalised finish reason (one vocabulary across providers; see README).
CREATE OR REPLACE MACRO finish_norm(r) AS CASE
    WHEN r IS NULL THEN NULL
    WHEN lower(r) IN ('stop', 'end_turn', 'stop_sequence', 'eos', 'complete', 'completed', 'final_answer') THEN 'stop'
    WHEN lower(r) IN ('tool_calls', 'tool_use', 'tool-calls', 'function_call', 'tool_call') THEN 'tool_calls'
    WHEN lower(r) IN ('length', 'max_tokens', 'max_output_tokens', 'model_context_window_exceeded') THEN 'length'
    WHEN lower(r) IN ('content_filter', 'content-filter', 'refusal', 'safety', 'recitation') THEN 'content_filter'
    WHEN lower(r) IN ('error', 'failed', 'failure') THEN 'error'
    WHEN lower(r) IN ('cancelled', 'canceled', 'aborted', 'interrupted', 'abort') THEN 'cancelled'
    ELSE NULL END;

-- A timestamp given as an ISO string (zone or naive = UTC) or as epoch seconds / milliseconds; NULL outside
-- 1970..2199 (a year-10000 or BC value is a corrupt field, and Python cannot even hold it as a datetime).
CREATE OR REPLACE MACRO ts_in_range(t) AS
    CASE WHEN t >= TIMESTAMPTZ '1970-01-01 00:00:00+00' AND t < TIMESTAMPTZ '2200-01-01 00:00:00+00' THEN t END;
CREATE OR REPLACE MACRO parse_ts(v) AS ts_in_range(CASE
    WHEN v IS NULL THEN NULL
    -- the usual shape, "...Z": straight to the cast (no type probe, no regex)
    WHEN starts_with(v::VARCHAR, '"') AND ends_with(v::VARCHAR, 'Z"') THEN try_cast(v ->> '$' AS TIMESTAMPTZ)
    WHEN json_type(v) IN ('UBIGINT', 'BIGINT', 'DOUBLE') THEN
        try(to_timestamp(CASE WHEN abs(v::DOUBLE) > 1e11 THEN v::DOUBLE / 1000 ELSE v::DOUBLE END))
    WHEN json_type(v) = 'VARCHAR' AND NOT regexp_matches(v ->> '$', '([zZ]|[+-]\d\d(:?\d\d)?)$') THEN
        -- naive local time: read in the zone of the variable naive_tz (ingest --naive-tz; default UTC)
        coalesce(try(timezone(coalesce(getvariable('naive_tz'), 'UTC'), try_cast(v ->> '$' AS TIMESTAMP))),
                 try_cast(v ->> '$' AS TIMESTAMPTZ))
    WHEN json_type(v) = 'VARCHAR' THEN try_cast(v ->> '$' AS TIMESTAMPTZ)
    ELSE NULL END);

-- Text of a JSON value that is a string, or a list of strings / {text} parts. (A value starting with a
-- quote is a string: read it with one parse instead of asking its type first.)
CREATE OR REPLACE MACRO json_text(v) AS CASE
    WHEN v IS NULL THEN NULL
    WHEN starts_with(v::VARCHAR, '"') THEN v ->> '$'
    ELSE CASE json_type(v)
        WHEN 'VARCHAR' THEN v ->> '$'
        WHEN 'ARRAY' THEN array_to_string(list_filter(
            list_transform(json_extract(v, '$[*]'),
                lambda p: CASE json_type(p) WHEN 'VARCHAR' THEN p ->> '$'
                                       WHEN 'OBJECT' THEN coalesce(p ->> 'text', p ->> 'content') END),
            lambda t: t IS NOT NULL), chr(10))
        ELSE NULL END END;

-- One line's record, parsed by an explicit schema (`s`: a json_transform structure). Ingest first runs
-- a batch strictly (malformed JSON raises; the fast case); only a batch holding such a line is parsed
-- again with the variable lenient_json set, where a malformed line becomes NULL (a reject).
CREATE OR REPLACE MACRO parse_line(t, s) AS CASE
    WHEN coalesce(getvariable('lenient_json'), false) THEN try(json_transform(t, s))
    ELSE json_transform(t, s) END;

-- true for a line that holds only whitespace
CREATE OR REPLACE MACRO is_blank(t) AS regexp_full_match(t, '\s*');  -- (a regex stops at the first non-space; trim copies the line)
