-- PostgreSQL twin of migrations/0050_ops.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- One row the readiness probe (/readyz) rewrites to prove the database
-- accepts writes end to end (lock, write, fsync), rather than only reads.
CREATE TABLE ops_heartbeat (
	id BIGINT PRIMARY KEY CHECK (id = 1),
	beat_at TEXT NOT NULL
);
