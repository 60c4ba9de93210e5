-- Turn starts from the turn-boundary truth (user_labels): a new human turn starts at every
-- user-role event labelled origin = 'human' (its code's bits 0-1 = 1, queries/replay/label_structural.sql).
-- Input: user_labels_narrow (the labels' codes; the view user_labels decodes them).
CREATE OR REPLACE TEMP TABLE stall_turn_starts AS
SELECT event_id FROM user_labels_narrow WHERE (code & 3) = 1;
