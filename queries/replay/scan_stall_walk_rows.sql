-- Stall replay, step 4a: how many rounds the bounded re-prompt walk reads (the rounds of the turns that hold a
-- stall), from which stallscan/replay/stalls.py chooses how many shares of the sessions it walks apart.
-- Input: rounds_narrow.
SELECT count(*) AS n
FROM rounds_narrow r
SEMI JOIN (SELECT DISTINCT session_id, turn_id FROM rounds_narrow
           WHERE round_kind IN ('dropped_tool_call', 'no_tool', 'narrated_intent')) s USING (session_id, turn_id)
