-- Store the report data (JSON text) under its key (stallscan.report.memo), keeping the newest `keep` entries
-- of the current events version (entries of an older version can never be asked for again).
-- Parameters: key (VARCHAR), data (VARCHAR), events_version (BIGINT), keep (INTEGER).
CREATE TABLE IF NOT EXISTS report_memo (
    key VARCHAR PRIMARY KEY,
    events_version BIGINT,
    made_at TIMESTAMPTZ,
    data VARCHAR
);

INSERT OR REPLACE INTO report_memo VALUES ($key, $events_version, now(), $data);

DELETE FROM report_memo
WHERE events_version IS DISTINCT FROM $events_version
   OR key NOT IN (SELECT key FROM report_memo ORDER BY made_at DESC, key LIMIT $keep);
