-- aider .aider.chat.history.md (Markdown) -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- Line classes: `# aider chat started at <local time>` (a session header: new session), `#### ` (what the
-- human typed; a multi-line prompt is a run of #### lines), `> ` (aider's own output: confirmations,
-- "Applied edit", `Tokens: N sent, M received`, errors), anything else (the model's reply). A block is a
-- run of lines of one class; blank lines inside a run belong to it, blank lines between runs are skipped.
-- (aider 0.50 writes every input line as its own `#### ` paragraph, aider 0.86 writes continuation lines
-- without blank lines: both become one user event per run of #### paragraphs.)
--   header -> system event (ts = the start time); #### run -> user message (meta.command for /commands);
--   reply run -> assistant message (tokens from the `Tokens:` line of the output block right after it);
--   > run -> system event (meta.aider_output), EXCEPT its edit-reflection part: from a line such as
--   "# 1 SEARCH/REPLACE block failed to match!" or "# Fix any errors below" to the end of the run, text
--   aider sends back to the model as a user message: a user message with meta.reflection = true.
-- Timestamps: aider logs only the session start. The human prompts are paired with the entries of the
-- sibling .aider.input.history (same folder; `# <local time>` then `+<line>` lines) inside the session's
-- time window (see ad_pairs; ts_quality per_message, meta.input_paired). Every other event carries the session start
-- (ts_quality per_session). Local times are read in the zone of the DuckDB variable `naive_tz` (default
-- UTC; meta.ts_zone). The file is re-read whole when it changes (appendable = false).
CREATE OR REPLACE TEMP MACRO aider_tokens(v) AS CASE
    WHEN v IS NULL OR v = '' THEN NULL
    WHEN ends_with(v, 'k') THEN round(try_cast(replace(rtrim(v, 'k'), ',', '') AS DOUBLE) * 1000)::BIGINT
    ELSE try_cast(replace(v, ',', '') AS BIGINT) END;

CREATE OR REPLACE TEMP TABLE ad_l AS
SELECT s.fid, s.line, s.bad_excerpt, rtrim(s.txt, chr(13) || chr(10)) AS t,
       CASE WHEN s.txt IS NULL THEN 'bad'
            WHEN s.blank THEN 'blank'
            WHEN starts_with(s.txt, '# aider chat started at ') THEN 'header'
            WHEN starts_with(s.txt, '####') AND (length(rtrim(s.txt, chr(13) || chr(10))) = 4
                                                 OR substr(s.txt, 5, 1) IN (' ', chr(9))) THEN 'human'
            WHEN rtrim(s.txt, chr(13) || chr(10)) = '>' OR starts_with(s.txt, '> ') THEN 'output'  -- not '>>>>>>> REPLACE'
            ELSE 'reply' END AS cls
FROM stage_lines s;

-- A #### run right after the model's reply (no `>` output between) is a markdown heading of that reply,
-- not a prompt (aider always prints its `> Tokens: ...` output after a reply before the next prompt),
-- unless it is a /command: such runs are reclassified as reply lines.
CREATE OR REPLACE TEMP TABLE ad_raw_runs AS
SELECT *, sum(CASE WHEN cls = 'header' OR cls IS DISTINCT FROM prev_cls THEN 1 ELSE 0 END)
            OVER (PARTITION BY fid ORDER BY line) AS raw_run
FROM (SELECT *, lag(cls) OVER (PARTITION BY fid ORDER BY line) AS prev_cls
      FROM ad_l WHERE cls NOT IN ('blank', 'bad'));

CREATE OR REPLACE TEMP TABLE ad_cls AS
SELECT r.fid, r.line, r.t,
       CASE WHEN r.cls = 'human' AND x.before = 'reply' AND NOT starts_with(ltrim(x.first_text), '/') THEN 'reply'
            ELSE r.cls END AS cls
FROM ad_raw_runs r
JOIN (SELECT fid, raw_run, lag(any_value(cls)) OVER (PARTITION BY fid ORDER BY raw_run) AS before,
             regexp_replace(arg_min(t, line), '^####[ \t]?', '') AS first_text
      FROM ad_raw_runs GROUP BY fid, raw_run) x USING (fid, raw_run);

-- runs of one class over the non-blank lines (a header always starts a new run); inside an output run
-- the edit reflection (from its first line to the end of the run) is a block of its own
CREATE OR REPLACE TEMP TABLE ad_runs AS
SELECT *, sum(CASE WHEN cls = 'header' OR cls IS DISTINCT FROM prev_cls THEN 1 ELSE 0 END)
            OVER (PARTITION BY fid ORDER BY line) AS run
FROM (SELECT *, lag(cls) OVER (PARTITION BY fid ORDER BY line) AS prev_cls,
             cls = 'output' AND regexp_matches(t, '^>\s*# (\d+ SEARCH/REPLACE blocks? failed to match!|Fix any errors below)') AS refl_start
      FROM ad_cls);

CREATE OR REPLACE TEMP TABLE ad_nb AS
SELECT *, run || CASE WHEN in_refl THEN 'r' ELSE '' END AS blk
FROM (SELECT *, bool_or(refl_start) OVER (PARTITION BY fid, run ORDER BY line
                                          ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS in_refl
      FROM ad_runs);

-- every line with its block (a blank line belongs to a block when the lines around it do)
CREATE OR REPLACE TEMP TABLE ad_all AS
SELECT l.fid, l.line, l.t, coalesce(n.cls, l.cls) AS cls, l.bad_excerpt, coalesce(n.blk, CASE WHEN l.cls = 'blank' AND pb = nb THEN pb END) AS blk
FROM (SELECT l.*,
             last_value(n.blk IGNORE NULLS) OVER (PARTITION BY l.fid ORDER BY l.line ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS pb,
             first_value(n.blk IGNORE NULLS) OVER (PARTITION BY l.fid ORDER BY l.line ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING) AS nb
      FROM ad_l l LEFT JOIN ad_nb n USING (fid, line)) l
LEFT JOIN ad_nb n USING (fid, line);

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN cls = 'bad' THEN 'reject' WHEN blk IS NULL THEN 'skip' ELSE 'event' END AS fate,
       CASE WHEN cls = 'bad' THEN 'invalid UTF-8' WHEN blk IS NULL THEN 'blank_line' ELSE cls END AS label,
       bad_excerpt AS excerpt
FROM ad_all;

CREATE OR REPLACE TEMP TABLE ad_blocks AS
SELECT fid, blk, min(line) AS line, max(line) AS last_line, count(*)::INTEGER AS n_records,
       arg_min(cls, line) AS cls, bool_or(contains(blk, 'r')) AS reflection,
       string_agg(CASE cls WHEN 'human' THEN rtrim(regexp_replace(t, '^####[ \t]?', ''), ' ')
                           WHEN 'output' THEN rtrim(regexp_replace(t, '^>[ ]?', ''), ' ')
                           WHEN 'blank' THEN '' ELSE rtrim(t, ' ') END, chr(10) ORDER BY line) AS body,
       arg_min(t, line) AS first_t
FROM ad_all WHERE blk IS NOT NULL
GROUP BY fid, blk;

-- sessions: one per header; its local start time
CREATE OR REPLACE TEMP TABLE ad_sess AS
SELECT b.*,
       last_value(CASE WHEN cls = 'header' THEN try_cast(trim(substr(first_t, 25)) AS TIMESTAMP) END IGNORE NULLS)
         OVER (PARTITION BY fid ORDER BY line) AS started,
       last_value(CASE WHEN cls = 'header' THEN line END IGNORE NULLS) OVER (PARTITION BY fid ORDER BY line) AS header_line,
       lead(cls) OVER (PARTITION BY fid ORDER BY line) AS next_cls,
       lead(body) OVER (PARTITION BY fid ORDER BY line) AS next_body
FROM ad_blocks b;

CREATE OR REPLACE TEMP TABLE ad_sess2 AS
SELECT s.*,
       (SELECT min(h.started) FROM ad_sess h WHERE h.fid = s.fid AND h.cls = 'header' AND h.line > s.header_line) AS next_started
FROM ad_sess s;

-- the sibling .aider.input.history of each chat file, read here (only the ones that exist)
SET VARIABLE aider_input_candidates = (SELECT coalesce(list(regexp_replace(file, '[^/\\]*$', '') || '.aider.input.history'), []::VARCHAR[]) FROM batch_files);
SET VARIABLE aider_inputs = (SELECT coalesce(list(file), []::VARCHAR[]) FROM glob(getvariable('aider_input_candidates')));

-- input entries: `# <local time>` then `+<line>` lines; key = the text with all whitespace removed
CREATE OR REPLACE TEMP TABLE ad_input AS
WITH raw AS (
    SELECT b.fid, try(decode(r.content)) AS content
    FROM read_blob(getvariable('aider_inputs')) r
    JOIN batch_files b ON regexp_replace(b.file, '[^/\\]*$', '') || '.aider.input.history' = r.filename
), lines AS (
    SELECT fid, x.i AS n, rtrim(x.l, chr(13)) AS l
    FROM (SELECT fid, unnest(list_transform(string_split(content, chr(10)), lambda l, i: {'i': i, 'l': l})) AS x
          FROM raw WHERE content IS NOT NULL)
), entries AS (
    SELECT *, sum(CASE WHEN regexp_matches(l, '^# \d{4}-\d\d-\d\d ') THEN 1 ELSE 0 END) OVER (PARTITION BY fid ORDER BY n) AS e
    FROM lines
)
SELECT fid, e,
       max(try_cast(substr(l, 3) AS TIMESTAMP)) FILTER (WHERE regexp_matches(l, '^# \d{4}-\d\d-\d\d ')) AS ts,
       regexp_replace(coalesce(string_agg(substr(l, 2), '' ORDER BY n) FILTER (WHERE starts_with(l, '+')), ''), '\s+', '', 'g') AS key
FROM entries WHERE e > 0
GROUP BY fid, e;

-- a prompt (a run of #### lines) is paired with an input entry of its session's time window: first by
-- its whole text (whitespace ignored), the k-th prompt of a text with the k-th entry of that text; the
-- prompts left over by their first non-empty line as a prefix of an entry not taken yet (aider 0.50
-- splits long inputs over several #### paragraphs, and two inputs typed in a row, like /clear then
-- /drop, can form one run): the k-th left-over prompt of a session with that first line (in line order)
-- with the k-th of its candidate entries not taken yet (in time order).
-- Every k is a rank over unique keys, so the pairing is fully determined (no ties for DuckDB to break
-- by thread timing): prompts are ranked by line (unique within a file), entries by (ts, e) (e, the
-- entry's position in the input history, is unique within a file; equal times go in file order).
-- The ranks are taken BEFORE the prompt x entry join: ranked after it, one prompt has a row per
-- candidate entry, those rows tie on line, and k_left was then an arbitrary number (a '/clear' prompt
-- got some later '/clear', or none, differently from run to run).
CREATE OR REPLACE TEMP TABLE ad_prompts AS
SELECT fid, line, started, next_started, header_line, full_key, key,
       row_number() OVER (PARTITION BY fid, header_line, full_key ORDER BY line) AS k_full
FROM (SELECT *, regexp_replace(body, '\s+', '', 'g') AS full_key,
             coalesce(regexp_replace(list_filter(string_split(body, chr(10)), lambda x: trim(x) <> '')[1], '\s+', '', 'g'), '') AS key
      FROM ad_sess2 WHERE cls = 'human');

CREATE OR REPLACE TEMP TABLE ad_exact AS
SELECT fid, line, e, ts FROM (
    SELECT p.fid, p.line, p.k_full, i.e, i.ts, row_number() OVER (PARTITION BY p.fid, p.line ORDER BY i.ts, i.e) AS k_in
    FROM ad_prompts p JOIN ad_input i ON i.fid = p.fid AND p.full_key <> '' AND i.key = p.full_key
         AND (p.started IS NULL OR i.ts >= p.started) AND (p.next_started IS NULL OR i.ts < p.next_started))
WHERE k_in = k_full;

CREATE OR REPLACE TEMP TABLE ad_pairs AS
SELECT fid, line, min(ts) AS ts FROM (
SELECT fid, line, ts FROM ad_exact
UNION ALL
SELECT fid, line, ts FROM (
    SELECT p.fid, p.line, i.ts, p.k_left,
           row_number() OVER (PARTITION BY p.fid, p.line ORDER BY i.ts, i.e) AS k_in
    FROM (SELECT *, row_number() OVER (PARTITION BY fid, header_line, key ORDER BY line) AS k_left
          FROM ad_prompts a WHERE NOT EXISTS (SELECT 1 FROM ad_exact x WHERE x.fid = a.fid AND x.line = a.line)) p
    JOIN (SELECT * FROM ad_input a WHERE NOT EXISTS (SELECT 1 FROM ad_exact x WHERE x.fid = a.fid AND x.e = a.e)) i
      ON i.fid = p.fid AND p.key <> '' AND starts_with(i.key, p.key)
         AND (p.started IS NULL OR i.ts >= p.started) AND (p.next_started IS NULL OR i.ts < p.next_started))
WHERE k_in = k_left)
GROUP BY fid, line;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT s.fid, s.line, s.last_line, 0 AS part, s.n_records,
       coalesce(nullif(regexp_extract(f.file, '([^/\\]+)[/\\][^/\\]+$', 1), ''), f.stem) || '/aider'
         || coalesce(' ' || strftime(s.started, '%Y-%m-%dT%H:%M:%S'), '') AS session_id,
       timezone(coalesce(getvariable('naive_tz'), 'UTC'), coalesce(p.ts, s.started)) AS ts,
       timezone(coalesce(getvariable('naive_tz'), 'UTC'), coalesce(p.ts, s.started)) AS ts_end,
       CASE WHEN p.ts IS NOT NULL OR (s.cls = 'header' AND s.started IS NOT NULL) THEN 'per_message'
            WHEN s.started IS NOT NULL THEN 'per_session' ELSE 'none' END AS ts_quality,
       CASE WHEN s.cls = 'human' OR s.reflection THEN 'user' WHEN s.cls = 'reply' THEN 'assistant' ELSE 'system' END AS role,
       CASE WHEN s.cls IN ('human', 'reply') OR s.reflection THEN 'message' ELSE 'system' END AS kind,
       s.body AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN s.cls = 'reply' THEN m.model END AS model, false AS is_sidechain,
       CASE WHEN s.cls = 'reply' AND s.next_cls = 'output' THEN aider_tokens(regexp_extract(s.next_body, 'Tokens: ([0-9.,]+k?) sent', 1)) END AS tokens_in,
       CASE WHEN s.cls = 'reply' AND s.next_cls = 'output' THEN aider_tokens(regexp_extract(s.next_body, 'sent, ([0-9.,]+k?) received', 1)) END AS tokens_out,
       json_object('aider_block', CASE WHEN s.reflection THEN 'reflection' ELSE s.cls END,
                   'reflection', s.reflection, 'aider_output', s.cls = 'output' AND NOT s.reflection,
                   'command', CASE WHEN s.cls = 'human' THEN starts_with(s.body, '/') END,
                   'input_paired', CASE WHEN s.cls = 'human' THEN p.ts IS NOT NULL END,
                   'ts_zone', coalesce(getvariable('naive_tz'), 'UTC'), 'ts_naive', true) AS meta
FROM ad_sess2 s JOIN batch_files f USING (fid)
LEFT JOIN ad_pairs p ON p.fid = s.fid AND p.line = s.line AND s.cls = 'human'
-- a session's model: from the first output block of the session with a `Model:` line (by line, not
-- any_value: a session where /model switched has several, and any_value picks one by thread timing)
LEFT JOIN (SELECT fid, header_line,
                  arg_min(regexp_extract(body, '(?m)^Models?: (\S+)', 1), line) FILTER (WHERE cls = 'output' AND regexp_matches(body, '(?m)^Models?: ')) AS model
           FROM ad_sess2 GROUP BY fid, header_line) m ON m.fid = s.fid AND m.header_line IS NOT DISTINCT FROM s.header_line;

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
