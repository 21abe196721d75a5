-- PostgreSQL twin of migrations/0022_reauth.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- When the person behind a login session last proved who they are
-- (password or second factor); NULL means at sign-in (created_at).
-- Sensitive account changes need it to be recent.
ALTER TABLE auth_sessions ADD COLUMN reauth_at TEXT;
