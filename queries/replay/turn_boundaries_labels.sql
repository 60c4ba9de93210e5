-- Whether user_labels (stored: user_labels_narrow) holds one row per user / tool event (turn_boundaries.sql's parameter complete): derive keeps the
-- labels in step with the events, and the labels' ids are the events' (unique), so equal counts mean every
-- user / tool event has its label. 0.04 CPU s at 10M generated events.
SELECT (SELECT count(*) FROM user_labels_narrow) = (SELECT count(*) FROM events WHERE role IN ('user', 'tool')) AS complete
