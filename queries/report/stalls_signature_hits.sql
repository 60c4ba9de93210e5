-- Report "Stalls": per narrated-intent signature, the rows of replay/stall_signature_hits.sql (what each
-- column means is said there) from the per-session cells (report/cells_stalls.sql): rounds matched, decided,
-- vetoed, outside the window, answered by the harness with a nudge; harness-judged stalls as 'nudge:<id>'.
-- Input: signature_cells, stall_signatures, scoped() (report/scoped_events.sql).
WITH c AS (
    SELECT id, sum(matched)::BIGINT AS matched, sum(matched_vetoed)::BIGINT AS matched_vetoed,
           sum(matched_outside)::BIGINT AS matched_outside, sum(decided)::BIGINT AS decided,
           sum(decided_outside)::BIGINT AS decided_outside, sum(decided_nudged)::BIGINT AS decided_nudged
    FROM scoped('signature_cells') GROUP BY id
)
SELECT s.id, s.kind, s.language,
       coalesce(c.matched, 0) AS matched,
       coalesce(c.decided, 0) AS decided,
       CASE WHEN s.kind = 'intent' THEN coalesce(c.matched_vetoed, 0) ELSE 0 END AS vetoed,
       coalesce(c.matched_outside, 0) AS outside_window,
       coalesce(c.decided_nudged, 0) AS harness_nudged
FROM stall_signatures s LEFT JOIN c USING (id)
UNION ALL
SELECT id, 'harness', 'any', decided, decided, 0, decided_outside, decided
FROM c WHERE starts_with(id, 'nudge:') AND decided > 0
ORDER BY 2, 4 DESC, 1;
