-- PostgreSQL twin of migrations/0071_channel_withheld.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- Messages not sent to a WhatsApp number because its 24-hour window had
-- closed; the next answer there says how many (then it is reset).
ALTER TABLE channel_threads ADD COLUMN withheld BIGINT NOT NULL DEFAULT 0;
