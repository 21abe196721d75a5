-- PostgreSQL twin of migrations/0150_webhook_dedupe_key.sql (TestSchemasMatch).
-- The dedupe lookup by a compact integer key. The index on (task_id,
-- dedupe_hash, received_at) held a 36-byte task id, the 64-character body
-- hash and the time for every deduplicated event: about 130 bytes an entry,
-- inserted at a random place, so under load it outgrew the page cache first
-- (the five-minute decline) and cost its pages in every commit's WAL frames.
-- dedupe_key is the hash's first 15 hex digits as an integer (60 bits, so it
-- is the same positive number in SQLite and PostgreSQL); the index on
-- (dedupe_key, received_at) is about a third of the size. The lookup checks
-- the real columns (task_id, body_hash) on the row, so two bodies or two
-- webhooks sharing a key never dedupe each other. dedupe_hash copied
-- body_hash: it goes, and the rows it marked get their key.
DROP INDEX webhook_events_dedupe;
ALTER TABLE webhook_events ADD COLUMN dedupe_key BIGINT;
UPDATE webhook_events SET dedupe_key = ('x' || substr(dedupe_hash, 1, 15))::bit(60)::bigint WHERE dedupe_hash IS NOT NULL;
ALTER TABLE webhook_events DROP COLUMN dedupe_hash;
CREATE INDEX webhook_events_dedupe_key ON webhook_events(dedupe_key, received_at) WHERE dedupe_key IS NOT NULL;
