-- PostgreSQL twin of migrations/0009_webhook_perf.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Webhook secrets record the vault key that encrypted them, like secrets do,
-- so a vault rotation finds and re-encrypts them before retiring old keys
-- (store/ciphertext.go lists every such column). '' means unknown: the next
-- rotation re-encrypts it.
ALTER TABLE webhooks ADD COLUMN secret_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN prev_secret_key_id TEXT NOT NULL DEFAULT '';

-- The dedupe index holds only the events stored while their webhook had a
-- dedupe window (dedupe_hash = body_hash then, NULL otherwise: tests,
-- replays, webhooks with dedupe off), so ingest without dedupe maintains
-- one index fewer. The old index also carried received_at, which the
-- lookup filters on rows of one hash anyway.
ALTER TABLE webhook_events ADD COLUMN dedupe_hash TEXT;
UPDATE webhook_events SET dedupe_hash = body_hash WHERE test = 0 AND replay_of IS NULL;
DROP INDEX webhook_events_hash;
CREATE INDEX webhook_events_dedupe ON webhook_events(task_id, dedupe_hash) WHERE dedupe_hash IS NOT NULL;
