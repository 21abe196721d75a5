-- Messages not sent to a WhatsApp number because its 24-hour window had
-- closed; the next answer there says how many (then it is reset).
ALTER TABLE channel_threads ADD COLUMN withheld INTEGER NOT NULL DEFAULT 0;
