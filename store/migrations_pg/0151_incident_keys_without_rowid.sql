-- PostgreSQL twin of migrations/0151_incident_keys_without_rowid.sql (TestSchemasMatch).
-- SQLite rebuilds incident_keys WITHOUT ROWID (one b-tree instead of a
-- table and its primary-key index). PostgreSQL has no such distinction:
-- its table and primary key stay as they are.
SELECT 1;
