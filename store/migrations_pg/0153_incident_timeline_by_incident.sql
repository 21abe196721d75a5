-- PostgreSQL twin of migrations/0153_incident_timeline_by_incident.sql (TestSchemasMatch).
-- SQLite rebuilds incident_timeline WITHOUT ROWID with the primary key
-- (incident_id, at, id). Here the primary key moves from id to those
-- columns and takes over from the (incident_id, at) index: one index per
-- entry instead of two, and the read (WHERE incident_id ORDER BY at, id)
-- follows the key's order without a sort.
ALTER TABLE incident_timeline DROP CONSTRAINT incident_timeline_pkey;
ALTER TABLE incident_timeline ADD PRIMARY KEY (incident_id, at, id);
DROP INDEX incident_timeline_incident;

-- The project's incidents by status, without the time of their last alert:
-- the list (FindIncidents) orders by an expression of the status first, so
-- it sorts the project's (or one status's) incidents whatever this index
-- holds, and nothing else reads it. With last_alert_at in it, every batch
-- of alerts joining an incident (its counters' UPDATE) wrote a new entry
-- (and could not be a HOT update); now only a status change does.
DROP INDEX incidents_project;
CREATE INDEX incidents_project ON incidents(project_id, status);
