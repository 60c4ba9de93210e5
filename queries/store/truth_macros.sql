-- One vocabulary of truth for every output (issue 23): who really wrote a user-role record, as three words,
-- and a qualifier when the record's envelope says otherwise. Defined on every connection (store.db.connect).
--   truth(origin, is_human_turn):      'human' | 'automatic' | 'tool result' (NULL: not a user-role record)
--   truth_note(origin, is_human_turn): 'human action in an automatic envelope' (a person's click inside a
--       harness text, e.g. Cline's "[TASK RESUMPTION]" after the person resumed the task), 'human feedback in
--       a tool result' (a person's words inside a tool result); NULL when envelope and truth agree.
-- is_human_turn (turn_boundaries) = origin 'human' or human content (replay/turn_boundaries_view.sql).
CREATE OR REPLACE TEMP MACRO truth(origin, is_human_turn) AS
    CASE WHEN origin IS NULL THEN NULL
         WHEN is_human_turn THEN 'human'
         WHEN origin = 'tool_result' THEN 'tool result'
         ELSE 'automatic' END;
CREATE OR REPLACE TEMP MACRO truth_note(origin, is_human_turn) AS
    CASE WHEN is_human_turn AND origin = 'automatic' THEN 'human action in an automatic envelope'
         WHEN is_human_turn AND origin = 'tool_result' THEN 'human feedback in a tool result' END;
