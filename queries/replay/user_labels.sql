-- Origin labels (the truth): who wrote each user-role event, and whether it is itself a model request.
-- Inputs: events; prompt_library (the automatic-prompt library, loaded by stallscan.labels from
-- stallscan/data/prompts.toml + the user's stallscan.toml: rank, id, harness[], match, text, value,
-- flag, kinds[], sidechain, first, after, origin, starts_request, human_content);
-- label_overrides (event_id, origin) from a user's labels file (may be empty).
-- Output: table user_labels, one row per events row with role user or tool.
-- Order of decision: override file > first library entry that matches (rank order) > structural
-- fallback (tool result; Codex unpaired item; anything else human).

-- library entries that can apply to each (format, kind) present: a hash join instead of a cross product. `pair`
-- numbers the (format, kind) pairs: ul_events stores it instead of the two strings, and the candidates join on it
CREATE OR REPLACE TEMP TABLE ul_lib AS
SELECT dense_rank() OVER (ORDER BY source_format, kind)::INTEGER AS pair, *
FROM (SELECT f.source_format, unnest(p.kinds) AS kind, p.*
      FROM (SELECT DISTINCT source_format FROM events WHERE role IN ('user', 'tool')) f
      CROSS JOIN prompt_library p
      -- (traces and gateway logs carry any harness's traffic: every harness's entries apply to them, issue 22)
      WHERE len(list_filter(p.harness, lambda h: h = '*' OR starts_with(f.source_format, h))) > 0
         OR f.source_format IN ('otlp', 'otlp_doc', 'phoenix_spans', 'litellm'));

-- Texts are compared with leading/trailing [ \t\n\r] removed: ul_strip(t) is trim(t, those four) without the cost of
-- trim on a text that neither starts nor ends with one of them (most texts; trim itself scans the whole text: at
-- 2M generated events the projection of ul_events below cost 0.4 CPU s with trim on every message).
CREATE OR REPLACE TEMP MACRO ul_strip(t) AS
    CASE WHEN starts_with(t, chr(32)) OR starts_with(t, chr(9)) OR starts_with(t, chr(10)) OR starts_with(t, chr(13))
           OR ends_with(t, chr(32)) OR ends_with(t, chr(9)) OR ends_with(t, chr(10)) OR ends_with(t, chr(13))
         THEN trim(t, chr(32) || chr(9) || chr(10) || chr(13)) ELSE t END;

-- the user/tool events an entry can read, with the context some entries need: the events of a (format, kind)
-- some entry applies to (the window of `first` and `after` reads every message of their sessions; the queue-copy
-- check, user_labels_finish.sql, reads its rows from events). Every other user/tool event gets its label from its
-- own role and kind (user_labels_finish.sql reads those from events): most tool results (the bulk of a log's rows
-- and bytes) are never copied. The trimmed text is kept only where an entry reads it (messages always: `after`
-- reads the previous one), the meta only where an entry reads a flag. Rows are keyed by the events' rowid (`rid`, a BIGINT),
-- not by event_id (a 32-character string): every table of the labels is read from the same `events`.
CREATE OR REPLACE TEMP TABLE ul_events AS
WITH reads AS (
    SELECT pair, source_format, kind, bool_or(match NOT IN ('flag')) AS text,
           bool_or(match = 'flag' OR flag IS NOT NULL) AS meta
    FROM ul_lib GROUP BY ALL
), ev AS NOT MATERIALIZED (  -- (inlined in each reader: materialising it copied every row once more, 0.15-0.3 CPU s at 2M)
    SELECT e.rowid AS rid, r.pair, e.session_id, e.seq, e.source_format, e.role, e.kind, e.is_sidechain,
           CASE WHEN r.meta THEN e.meta END AS meta,
           CASE WHEN e.kind = 'message' OR r.text
                THEN ul_strip(coalesce(e.text, '')) ELSE '' END AS t
    FROM events e LEFT JOIN reads r ON r.source_format = e.source_format AND r.kind = e.kind
    WHERE e.role IN ('user', 'tool') AND (r.kind IS NOT NULL OR e.kind = 'message')
), msgs AS (
    -- (only the sessions where an entry reads them: a user message of a format with a `first` or `after` entry:
    -- the window still sees every user message of such a session, whatever its format)
    SELECT rid,
           row_number() OVER w = 1 AS is_first,
           lag(t) OVER w AS prev_text
    FROM ev WHERE role = 'user' AND kind = 'message'
      AND session_id IN (SELECT session_id FROM ev
                         WHERE role = 'user' AND kind = 'message'
                           AND source_format IN (SELECT source_format FROM ul_lib
                                                 WHERE first IS NOT NULL OR after IS NOT NULL))
    WINDOW w AS (PARTITION BY session_id ORDER BY seq)
)
-- (stored: what the entries' conditions read, the (format, kind) as its `pair`, for the pairs an entry applies to; the
-- session, order and role only the window above and the queue-copy check read, and that check reads them from
-- events: writing the five strings and the order here cost about a third of this table's CPU s at 10M generated events)
SELECT ev.rid, ev.pair, ev.is_sidechain, ev.meta, ev.t,
       coalesce(msgs.is_first, false) AS is_first, msgs.prev_text
FROM ev LEFT JOIN msgs USING (rid)
WHERE ev.pair IS NOT NULL;

-- candidate (event, entry) pairs whose conditions hold, for every match kind but regex (regex entries:
-- queries/replay/user_labels_regex.sql, one copy per entry in one INSERT, so each pattern is compiled once)
CREATE OR REPLACE TEMP TABLE ul_cand AS
SELECT u.rid, l.rank, l.id, l.origin, l.starts_request, l.human_content
FROM ul_events u
JOIN ul_lib l ON l.pair = u.pair
WHERE l.match <> 'regex'
  AND (l.sidechain IS NULL OR l.sidechain = u.is_sidechain)
  AND (l.first IS NULL OR l.first = u.is_first)
  AND (l.after IS NULL OR contains(coalesce(u.prev_text, ''), l.after))
  AND (l.flag IS NULL OR json_extract_string(u.meta, '$."' || l.flag || '"') = 'true')
  AND CASE l.match
        WHEN 'flag'     THEN json_extract_string(u.meta, '$."' || l.text || '"') = l.value
        WHEN 'prefix'   THEN starts_with(u.t, l.text)
        WHEN 'exact'    THEN u.t = l.text
        WHEN 'contains' THEN contains(u.t, l.text)
        ELSE false END;
