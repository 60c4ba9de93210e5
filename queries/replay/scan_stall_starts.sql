-- Stall replay, step 1a: the events that start a human turn, by rowid (stallscan/replay/scan.py marks them in
-- the scan of scan_stall_ev.sql). Input: events, stall_turn_starts.
SELECT e.rowid AS rid FROM events e SEMI JOIN stall_turn_starts s USING (event_id)
