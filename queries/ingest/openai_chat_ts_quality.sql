-- OpenAI-chat / Hermes logs: a timestamp shared by several messages of one session is a flush time
-- (Hermes stamps a whole turn with one value), not a message time. Input: batch_seq (ingest_commit.sql: the
-- keys of the rows the batch wrote).
UPDATE events SET ts_quality = q.quality
FROM (SELECT event_id,
             CASE WHEN ts IS NULL THEN 'none'
                  WHEN count(*) OVER (PARTITION BY session_id, ts) > 1 THEN 'per_flush'
                  ELSE 'per_message' END AS quality
      FROM events
      WHERE source_format = 'openai_chat' AND session_id IN (SELECT session_id FROM batch_seq)) q
WHERE events.event_id = q.event_id AND events.ts_quality <> q.quality;
