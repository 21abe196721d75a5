-- Correlation keys as one b-tree. incident_keys was a rowid table with its
-- primary key in a separate index: every key an event adds was a row
-- appended to the table and an entry in the index at a random place (the
-- key's text), and the two held the same three columns. WITHOUT ROWID the
-- primary key is the table: one insert, half the pages, and the random
-- part stays in the page cache longer under an alert storm.
CREATE TABLE incident_keys_new (
	project_id TEXT NOT NULL,
	key TEXT NOT NULL,
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	PRIMARY KEY (project_id, key, incident_id)
) WITHOUT ROWID;
INSERT INTO incident_keys_new (project_id, key, incident_id) SELECT project_id, key, incident_id FROM incident_keys;
DROP TABLE incident_keys;
ALTER TABLE incident_keys_new RENAME TO incident_keys;
