-- PostgreSQL twin of migrations/0157_incident_main_key.sql (TestSchemasMatch):
-- an opened incident's first correlation key on its row, found through a
-- partial index over open incidents, instead of an incident_keys row (one
-- heap row, two index entries and a foreign-key check fewer per incident).
ALTER TABLE incidents ADD COLUMN main_key TEXT;
CREATE INDEX incidents_main_key ON incidents(project_id, main_key) WHERE main_key IS NOT NULL AND status != 'resolved';
