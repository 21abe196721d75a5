-- One row the readiness probe (/readyz) rewrites to prove the database
-- accepts writes end to end (lock, write, fsync), rather than only reads.
CREATE TABLE ops_heartbeat (
	id INTEGER PRIMARY KEY CHECK (id = 1),
	beat_at TEXT NOT NULL
);
