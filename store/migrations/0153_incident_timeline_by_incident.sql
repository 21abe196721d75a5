-- An incident's timeline as one b-tree, in the order it is read. The table
-- was a rowid table with two indexes: its id (the primary key) and
-- (incident_id, at). Every entry was three b-tree inserts and the read
-- (FindIncident: WHERE incident_id ORDER BY at, id) went through the index
-- and back to the table for each row. WITHOUT ROWID with the primary key
-- (incident_id, at, id) the rows are stored in that order: one insert, and
-- the read is a range of the table. In an alert storm of distinct groups
-- this was about a fifth of what opening an incident costs (callgrind:
-- BenchmarkIngestDistinctGroups, -17k of 314k instructions per event).
-- Ids are uuids made by NewID: unique without their own index; nothing
-- looks an entry up by id alone.
CREATE TABLE incident_timeline_new (
	id TEXT NOT NULL,
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	at TEXT NOT NULL,
	kind TEXT NOT NULL,            -- alert, session, approval, note, status
	actor TEXT,
	text TEXT NOT NULL DEFAULT '',
	data TEXT NOT NULL DEFAULT '{}',
	follow TEXT,                   -- 0135: the entries that follow an alert entry, JSON
	PRIMARY KEY (incident_id, at, id)
) WITHOUT ROWID;
INSERT INTO incident_timeline_new (id, incident_id, at, kind, actor, text, data, follow)
	SELECT id, incident_id, at, kind, actor, text, data, follow FROM incident_timeline;
DROP TABLE incident_timeline;
ALTER TABLE incident_timeline_new RENAME TO incident_timeline;

-- The project's incidents by status, without the time of their last alert:
-- the list (FindIncidents) orders by an expression of the status first, so
-- it sorts the project's (or one status's) incidents whatever this index
-- holds, and nothing else reads it. With last_alert_at in it, every batch
-- of alerts joining an incident (its counters' UPDATE) moved the
-- incident's entry; now only a status change does.
DROP INDEX incidents_project;
CREATE INDEX incidents_project ON incidents(project_id, status);
