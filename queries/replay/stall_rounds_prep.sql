-- Stall replay, step 1: every event's turn and round number, the nudges after each round, and the
-- text-only replies' distinct tails the narrated-intent signatures are matched against (queries/replay/stall_sig_match.sql).
-- Input: events, stall_scan (stallscan/replay/stall_scans.py: turn and round numbers), the tables of
-- queries/replay/stall_lookups.sql, stall_prompts, stall_settings (stallscan/replay/stall_data.py installs the last
-- two).
-- Order inside a session is seq (unique inside a session: ingest numbers it), here and in the reference walk.
-- Texts never go through a sort: the one scan carries narrow columns only, and each text-derived
-- column is computed by a plain projection of the events that need it. Steps join on the events' rowid
-- (`rid`, a BIGINT) rather than on event_id (a 32-character string): the tables of one replay are all
-- read from the same `events` table.

-- Every event's turn (human turn starts so far) and, for a reply, its place in the turn are counted by
-- stallscan/replay/scan.py over scan_stall_ev.sql's columns: the temp table stall_scan holds the rows of the events
-- queries/replay/stall_lookups.sql found (the nudges' events, the background calls', the approval-mode marked ones),
-- read by rowid (rid; a reply's place in its turn is in stall_replies, the replies' rows only, which
-- queries/replay/stall_rounds.sql reads); the same scan writes stall_turn_span, one row per turn (its span, first row,
-- start and last reply by rowid), which queries/replay/stall_turns.sql reads.

-- the [[background]] tool calls (stall_call_hits: queries/replay/stall_lookups.sql) with their turn, looked up in
-- stall_scan by rowid (the scan wrote the rows of those calls' events), and the table the entries' matches go to:
-- one statement per entry (queries/replay/stall_background_match.sql, its regexes constants, compiled once), then
-- queries/replay/stall_turn_evidence.sql keeps each turn's first.
CREATE OR REPLACE TEMP TABLE stall_calls AS
SELECT v.session_id, s.turn_id, v.seq, v.name, v.arguments
FROM stall_call_hits v JOIN stall_scan s ON s.rid = v.rid;

CREATE OR REPLACE TEMP TABLE stall_bg_hits (session_id VARCHAR, turn_id BIGINT, seq INTEGER, ord INTEGER, id VARCHAR);


-- after each round, before the next round of the same turn: the first known nudge, and whether the
-- person interrupted it (interrupt marker or a Codex turn_aborted event); keyed by the round's rowid (round_rid:
-- the turn's last reply before the event, counted by the scan; -1 when the turn has none yet). The few events that
-- can count (a prompt hit, turn_aborted: stall_nudge_events, queries/replay/stall_lookups.sql) look up their round in
-- stall_scan by rowid.
CREATE OR REPLACE TEMP TABLE stall_nudges AS
SELECT s.round_rid AS rid,
       arg_min(h.id, v.seq::BIGINT * 100000 + h.ord) FILTER (WHERE h.prompt_role = 'nudge') AS nudge_id,
       arg_min(h.reacts_to, v.seq::BIGINT * 100000 + h.ord) FILTER (WHERE h.prompt_role = 'nudge') AS nudge_reacts_to,
       count(DISTINCT v.rid) FILTER (WHERE h.prompt_role = 'nudge') AS n_nudges,
       bool_or(h.prompt_role = 'interrupt' OR v.kind = 'turn_aborted') AS interrupted
FROM stall_scan s
JOIN stall_nudge_events v ON s.rid = v.rid
LEFT JOIN stall_prompt_hits h ON h.rid = v.rid
WHERE s.round_rid >= 0
GROUP BY s.round_rid;

-- A reply's own fields (its finish, provider, what its text says) are computed where the rounds are written
-- (queries/replay/stall_rounds.sql, from events and stall_scan): no table of every reply is written here. Its text
-- matters only for a text-only reply (n_tool_calls = 0: a reply with tool calls is a tool_round whatever it says).
-- The assistant-side sentinels (stall_prompts role 'sentinel') a text-only reply may be: matched where the rounds are
-- written (queries/replay/stall_rounds.sql), on the stripped text that statement computes anyway, not by a statement
-- of their own over every text-only reply (at 10M generated events, 2,749,692 text-only replies, that statement cost
-- 0.35 CPU s and the match inside the rounds' about 0.15-0.2: docs/replay-scan.md "stall18"). An exact or prefix
-- sentinel is looked up by a key, the first stall_sentinel_key characters (the shortest exact / prefix text's length:
-- a text that equals or starts with a sentinel's text starts with its key; a shorter text matches none), its entries
-- (in ord order) then checked in full; any other sentinel (contains) is checked on every text-only reply
-- (stall_sentinel_any: none in the library).
SET VARIABLE stall_sentinel_key = (SELECT coalesce(min(length(text)), 0) FROM stall_prompts
                                   WHERE role = 'sentinel' AND match IN ('exact', 'prefix'));

CREATE OR REPLACE TEMP TABLE stall_sentinel_keys AS
SELECT left(text, getvariable('stall_sentinel_key')) AS skey,
       list({'ord': ord, 'match': match, 'text': text, 'reacts_to': reacts_to} ORDER BY ord) AS entries
FROM stall_prompts WHERE role = 'sentinel' AND match IN ('exact', 'prefix')
GROUP BY ALL;

SET VARIABLE stall_sentinel_any = (
    SELECT coalesce(list({'ord': ord, 'match': match, 'text': text, 'reacts_to': reacts_to} ORDER BY ord), [])
    FROM stall_prompts WHERE role = 'sentinel' AND coalesce(match, '') NOT IN ('exact', 'prefix'));

-- The tails the signatures look at: a text-only reply's last tail_chars characters when it is not blank, and its
-- length capped one above the largest max_chars (cap: the signature hits of a reply depend on its tail and on
-- whether its length is within each max_chars, so on (tail, cap) only). stall_tails: the distinct tails (ascii: the
-- tail holds no character above U+007F, so a signature whose every match holds one, stall_signatures.non_ascii,
-- cannot match it; min_chars: the shortest whole text with that tail, as far as any max_chars can tell). The
-- signatures run once per distinct tail (queries/replay/stall_sig_match.sql) and their hits are gathered once per
-- (tail, cap) (queries/replay/stall_rounds.sql): replies that end alike (short finals, a harness's canned phrases)
-- cost one match each.
-- stall_tail(s) / stall_cap(s): the tail and capped length of a stripped text (tail NULL: blank), their limits
-- read once into variables (a scalar subquery at each use costs a cross product with every reply). A text of at
-- most tail_chars bytes is its own tail (it has no more characters than bytes): right() counts the characters of
-- every text (at 10M generated events, the 2,749,692 text-only replies, 0.11-0.13 CPU s a use against 0.02).
SET VARIABLE stall_tail_chars = (SELECT value::INTEGER FROM stall_settings WHERE key = 'tail_chars');

SET VARIABLE stall_cap = (SELECT coalesce(max(max_chars) + 1, 0) FROM stall_signatures);

CREATE OR REPLACE TEMP MACRO stall_tail(s) AS
    CASE WHEN coalesce(s, '') = '' THEN NULL
         WHEN strlen(s) <= getvariable('stall_tail_chars') THEN s
         ELSE right(s, getvariable('stall_tail_chars')) END;

CREATE OR REPLACE TEMP MACRO stall_cap(s) AS least(length(s), getvariable('stall_cap'));

CREATE OR REPLACE TEMP TABLE stall_tail_caps AS
SELECT stall_tail(stripped) AS tail, stall_cap(stripped) AS cap
FROM (SELECT stall_strip(text) AS stripped FROM events WHERE role = 'assistant' AND n_tool_calls = 0)
WHERE coalesce(stripped, '') <> ''
GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE stall_tails AS
SELECT tail, min(cap) AS min_chars, strlen(tail) = length(tail) AS ascii FROM stall_tail_caps GROUP BY tail;

CREATE OR REPLACE TEMP TABLE stall_tail_matches (tail VARCHAR, ord INTEGER, id VARCHAR, kind VARCHAR);
