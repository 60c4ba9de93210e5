-- Per narrated-intent signature: text-only rounds it matched, rounds it decided (recorded as the round's
-- signature), matches vetoed by a done / question / statement signature or by a wait after background
-- work, matches outside the after-a-tool-round window, and decided rounds the harness itself answered with a stall nudge (its own verdict agreed).
-- Harness-judged stalls appear as signature 'nudge:<id>'. Input: rounds_narrow, stall_signatures, stall_scope.
WITH r AS (SELECT * FROM rounds_narrow WHERE session_id IN (SELECT session_id FROM stall_scope)),
m AS (SELECT unnest(sig_hits || veto_hits || wait_hits) AS id, after_tool_round, round_kind,
             vetoed OR (len(wait_hits) > 0 AND background IS NOT NULL) AS vetoed FROM r)
SELECT s.id, s.kind, s.language,
       (SELECT count(*) FROM m WHERE m.id = s.id) AS matched,
       (SELECT count(*) FROM r WHERE r.signature = s.id) AS decided,
       (SELECT count(*) FROM m WHERE m.id = s.id AND s.kind = 'intent' AND m.vetoed) AS vetoed,
       (SELECT count(*) FROM m WHERE m.id = s.id AND NOT m.after_tool_round) AS outside_window,
       (SELECT count(*) FROM r WHERE r.signature = s.id AND r.nudge_reacts_to IN ('narrated', 'no_tool', 'dropped')) AS harness_nudged
FROM stall_signatures s
UNION ALL
SELECT signature, 'harness', 'any', count(*), count(*), 0, count(*) FILTER (WHERE NOT after_tool_round), count(*)
FROM r WHERE starts_with(signature, 'nudge:') GROUP BY signature
ORDER BY 2, 4 DESC, 1;
