-- Sessions' timelines: every event with its time, gap, role, origin (and truth / truth_note:
-- queries/store/truth_macros.sql), the router's decision, the round kind
-- and stall outcome, in session order, each with its event's rowid; the excerpts of the rows shown come
-- from report/timeline_excerpts.sql, by those rowids
-- (the report keeps a few rows around what a session flags: redacting every text of a long session cost
-- more than the rest). Inputs: events, turn_boundaries, rounds_core (a reply's row by session_id and seq), stalls.
-- Parameter: $sessions (VARCHAR[]: exact session ids; `show` asks for one, the report for every session it
-- lists, in one statement). Each derived table is narrowed to the sessions (by session_id) before its join,
-- so no join reads a whole table: joining the whole tables took 0.1-0.2 s per session at 1M events. The
-- filter is a semi-join on the unnested ids, not list_contains (which tests the list for every row: the
-- statement took 0.055 against 0.028 CPU s warm for the 1M-event report's 21 sessions). The
-- origin comes from turn_boundaries, which holds user_labels' origin and rule for every labelled event (it
-- joins user_labels, and both have a row for every user / tool event); user_labels has no session column.
WITH e AS (
    SELECT session_id, event_id, rowid AS event_rowid, seq, line, ts, role, kind, n_tool_calls, finish_reason
    FROM events WHERE session_id IN (SELECT unnest($sessions::VARCHAR[]))
)
SELECT e.session_id, e.event_id, e.event_rowid, e.seq, e.line, e.ts, b.gap_s, e.role, e.kind,
       b.origin, b.origin_rule, truth(b.origin, b.is_human_turn) AS truth,
       truth_note(b.origin, b.is_human_turn) AS truth_note, b.decided_by, b.decision, b.error,
       r.round_kind, r.signature, s.stall_index, s.outcome AS stall_outcome,
       e.n_tool_calls, e.finish_reason
FROM e
LEFT JOIN (SELECT event_id, origin, origin_rule, is_human_turn, gap_s, decided_by, decision, error FROM turn_boundaries_by_seq
           WHERE session_id IN (SELECT unnest($sessions::VARCHAR[]))) b USING (event_id)
LEFT JOIN (SELECT session_id, seq,  -- (the round kind's code as its string: the list of queries/replay/stall_rounds.sql)
                  coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty',
                            'truncated', 'cancelled', 'failed'][nullif(codes & 255, 0)], uncoded ->> 'round_kind')
                      AS round_kind,
                  uncoded ->> 'signature' AS signature
           FROM rounds_core
           WHERE session_id IN (SELECT unnest($sessions::VARCHAR[]))) r USING (session_id, seq)
LEFT JOIN (SELECT event_id, stall_index, outcome FROM stalls
           WHERE session_id IN (SELECT unnest($sessions::VARCHAR[]))) s USING (event_id)
ORDER BY e.session_id, e.seq;
