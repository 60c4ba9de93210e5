-- Stall replay, step 1a: the few events whose turn the stall scan must hand out (stallscan/replay/stall_scans.py
-- writes stall_scan, their turn and round by rowid, for these rows only), found in `events` before the scan: the user
-- messages that are a known nudge or an interrupt marker and Codex's turn_aborted events (stall_nudge_events: the
-- nudges after a round, queries/replay/stall_rounds_prep.sql), the tool calls a [[background]] entry may match
-- (stall_call_hits) and the events marked with a plan-approval mode (stall_mode_hits: queries/replay/
-- stall_turn_evidence.sql). The scan used to write every event's row (10M rows at 10M generated events) and each
-- of those statements probed all of them; queries/replay/scan_stall_lookups.sql hands the scan their rowids.
-- Input: events, stall_prompts, stall_approval_modes (stallscan/replay/stall_data.py installs the last two).

-- Texts are compared with leading/trailing [ \t\n\r] removed: stall_strip(t) is trim(t, those four) without the cost
-- of trim on a text that neither starts nor ends with one of them (most texts: trim itself costs about 250 ns a text).
-- The first character is tested by one comparison, t < '!' (true for a text that is empty or starts with a byte
-- below '!', among them the four; trim leaves any other text as it was), which DuckDB answers from the four bytes
-- a string keeps inline: four starts_with cost more, and t[1] (a code point made into a string; at 10M generated
-- events, the 2,749,692 text-only replies, the macro 0.29-0.34 against 0.24-0.25 CPU s a use, docs/replay-scan.md
-- "stall17"); the last stays four ends_with: t[-1] and ascii(t) go through the whole text (a 20 KB text: about 7 µs).
CREATE OR REPLACE TEMP MACRO stall_strip(t) AS
    CASE WHEN t < '!'
           OR ends_with(t, chr(32)) OR ends_with(t, chr(9)) OR ends_with(t, chr(10)) OR ends_with(t, chr(13))
         THEN trim(t, chr(32) || chr(9) || chr(10) || chr(13)) ELSE t END;

-- user messages that are a known nudge or an interrupt marker (text with leading/trailing [ \t\n\r] removed): every
-- (message, prompt) pair that matches (stall_nudges, queries/replay/stall_rounds_prep.sql, keeps the first by seq,
-- then ord).
-- An exact or prefix match is found by a hash join on a key, the first stall_prompt_key characters (the shortest
-- exact / prefix text's length: a text that equals or starts with a prompt's text starts with its key; a shorter
-- text matches none), then checked in full; the contains matches (few prompts) are a nested loop over the messages.
-- The stripped messages are computed once for both (a materialized CTE, held while the statement runs: about
-- 9 MB of text at 2M generated events; an events scan with stall_strip each costs about as much as its join).
-- Every message against every prompt in one nested loop cost about twice as much (at 2M generated events, one
-- thread: 0.093-0.097 against 0.049-0.054 CPU s).
SET VARIABLE stall_prompt_key = (SELECT coalesce(min(length(text)), 0) FROM stall_prompts
                                 WHERE role IN ('nudge', 'interrupt') AND match IN ('exact', 'prefix'));

CREATE OR REPLACE TEMP TABLE stall_prompt_hits AS
WITH p AS (
    SELECT id, ord, role, reacts_to, match, text, left(text, getvariable('stall_prompt_key')) AS key
    FROM stall_prompts WHERE role IN ('nudge', 'interrupt')
), u AS MATERIALIZED (
    SELECT rowid AS rid, stall_strip(text) AS stripped FROM events WHERE role = 'user' AND kind <> 'tool_result'
)
SELECT u.rid, p.id, p.ord, p.role AS prompt_role, p.reacts_to
FROM u
JOIN (FROM p WHERE match IN ('exact', 'prefix')) p ON left(u.stripped, getvariable('stall_prompt_key')) = p.key
 AND CASE p.match WHEN 'exact' THEN u.stripped = p.text ELSE starts_with(u.stripped, p.text) END
UNION ALL
SELECT u.rid, p.id, p.ord, p.role AS prompt_role, p.reacts_to
FROM u
JOIN (FROM p WHERE coalesce(match, '') NOT IN ('exact', 'prefix')) p ON contains(u.stripped, p.text);

-- the events the nudges after a round are found among: a prompt hit or a Codex turn_aborted event
CREATE OR REPLACE TEMP TABLE stall_nudge_events AS
SELECT rowid AS rid, seq, kind FROM events
WHERE kind = 'turn_aborted' OR rowid IN (SELECT rid FROM stall_prompt_hits);

-- the tool calls some [[background]] entry's tool regex matches ($bg_tools: the entries' `tool` regexes as one
-- alternation, a constant compiled once; NULL: no entry). The calls are read from `events` (a parallel scan); only
-- the kept ones look up their turn in stall_scan (a positional read of every tool call beside the scan's rows ran on
-- one thread: 2.3 CPU s at 10M generated events, none of whose calls a tool regex matches).
CREATE OR REPLACE TEMP TABLE stall_call_hits AS
SELECT rid, session_id, seq, coalesce(c.name, '') AS name, coalesce(c.arguments, '') AS arguments
FROM (SELECT rowid AS rid, session_id, seq, unnest(tool_calls) AS c
      FROM events WHERE role = 'assistant' AND n_tool_calls > 0)
WHERE $bg_tools::VARCHAR IS NOT NULL AND regexp_matches(coalesce(c.name, ''), coalesce($bg_tools::VARCHAR, ''));

-- the events marked with a plan-approval mode (a [[approval_mode]] entry's meta key and value; meta is parsed only
-- when its text holds the key: ingest writes every meta key as a plain ASCII literal, never escaped; at 10M
-- generated events 0.76-0.88 against 0.11-0.16 CPU s)
CREATE OR REPLACE TEMP TABLE stall_mode_hits AS
SELECT e.rowid AS rid, e.session_id, e.seq, m.id, m.ord
FROM events e
JOIN stall_approval_modes m ON contains(e.meta, m.meta_key)
 AND json_extract_string(e.meta, '$."' || m.meta_key || '"') = m.value
WHERE e.role <> 'assistant' AND e.meta IS NOT NULL;
