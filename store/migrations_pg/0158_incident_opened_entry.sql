-- PostgreSQL twin of migrations/0158_incident_opened_entry.sql (TestSchemasMatch):
-- an opened incident's first timeline entry rides on its row (one heap row,
-- its index entry and a foreign-key check fewer per opened incident).
ALTER TABLE incidents ADD COLUMN opened_entry TEXT;
