-- Stall replay, step 4a: how many rounds the bounded re-prompt walk reads (the rounds of the turns that hold a
-- stall), from which stallscan/replay/stall_scans.py chooses how many shares of the sessions it walks apart.
-- Input: rounds_core.
SELECT count(*) AS n
FROM rounds_core r
-- (round kind codes 3, 4, 5: dropped_tool_call, no_tool, narrated_intent; queries/replay/stall_rounds.sql)
SEMI JOIN (SELECT DISTINCT session_id, turn_id FROM rounds_core
           WHERE codes & 255 IN (3, 4, 5)) s USING (session_id, turn_id)
