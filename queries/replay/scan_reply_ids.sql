-- Turn boundaries, step 1b: the replies' event ids by rowid, looked up after the previous-reply scan
-- (stallscan/replay/scan.py take_by_rid), so the scan itself carries no strings. Input: events.
SELECT e.rowid AS rid, e.event_id FROM events e WHERE e.role = 'assistant'
