-- Stall replay, step 1a: the rowids of the events whose turn the stall scan hands out (queries/replay/
-- stall_lookups.sql; stallscan/replay/stall_scans.py writes stall_scan for these rows only; a row may come more than
-- once).
SELECT rid FROM stall_nudge_events UNION ALL SELECT rid FROM stall_call_hits UNION ALL SELECT rid FROM stall_mode_hits
