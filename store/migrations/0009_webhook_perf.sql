-- Webhook secrets record the vault key that encrypted them, like secrets do,
-- so a vault rotation finds and re-encrypts them before retiring old keys
-- (store/ciphertext.go lists every such column). '' means unknown: the next
-- rotation re-encrypts it.
ALTER TABLE webhooks ADD COLUMN secret_key_id TEXT NOT NULL DEFAULT '';
ALTER TABLE webhooks ADD COLUMN prev_secret_key_id TEXT NOT NULL DEFAULT '';
