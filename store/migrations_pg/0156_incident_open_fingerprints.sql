-- PostgreSQL twin of migrations/0156_incident_open_fingerprints.sql (TestSchemasMatch):
-- an opened incident's fingerprints ride on its row until a later batch
-- joins it and moves them into incident_alerts (one row and one foreign
-- key check fewer per opened incident).
ALTER TABLE incidents ADD COLUMN open_fingerprints TEXT;
