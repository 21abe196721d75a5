-- PostgreSQL twin of migrations/0153_incident_timeline_by_incident.sql (TestSchemasMatch).
-- SQLite rebuilds incident_timeline WITHOUT ROWID with the primary key
-- (incident_id, at, id). Here the primary key moves from id to those
-- columns and takes over from the (incident_id, at) index: one index per
-- entry instead of two, and the read (WHERE incident_id ORDER BY at, id)
-- follows the key's order without a sort.
ALTER TABLE incident_timeline DROP CONSTRAINT incident_timeline_pkey;
ALTER TABLE incident_timeline ADD PRIMARY KEY (incident_id, at, id);
DROP INDEX incident_timeline_incident;
