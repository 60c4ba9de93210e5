-- Turn starts from the turn-boundary truth (user_labels): a new human turn starts at every
-- user-role event labelled origin = 'human'. Input: user_labels.
CREATE OR REPLACE TEMP TABLE stall_turn_starts AS
SELECT event_id FROM user_labels WHERE origin = 'human';
