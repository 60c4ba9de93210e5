-- Whether an incremental refresh of signature_cells (report/cells_signatures.sql) has anything to do for the changed
-- sessions (cells_changed): a stored row of theirs to delete, or a reply of theirs with signature hit lists
-- (rounds_hits: stored only for replies with a hit) or a deciding signature (rounds_core's uncoded signature). The
-- cells' rows come from those two only, so without any of the three the DELETE and the INSERT are not run.
SELECT EXISTS (SELECT 1 FROM main.signature_cells WHERE session_id IN (SELECT session_id FROM cells_changed))
    OR EXISTS (SELECT 1 FROM rounds_hits WHERE session_id IN (SELECT session_id FROM cells_changed))
    OR EXISTS (SELECT 1 FROM rounds_core
               WHERE session_id IN (SELECT session_id FROM cells_changed) AND uncoded ->> 'signature' IS NOT NULL);
