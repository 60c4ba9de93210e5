-- The sessions of the rows from rowid $lo on (a batched scan's last rowid range): stallscan/replay/scan_batches.py `batches`
-- stops as soon as it walks one of them before reading that range (a grown session's new rows at the table's end
-- would bring it back after its walk), instead of at the table's end. Input: events.
SELECT DISTINCT session_id FROM events WHERE rowid >= $lo
