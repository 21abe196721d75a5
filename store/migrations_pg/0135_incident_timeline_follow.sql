-- PostgreSQL twin of migrations/0135_incident_timeline_follow.sql (TestSchemasMatch).
-- A nullable column without a default: a catalogue change, no table rewrite.
ALTER TABLE incident_timeline ADD COLUMN follow TEXT;
