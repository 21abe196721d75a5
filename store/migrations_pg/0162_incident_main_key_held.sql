-- PostgreSQL twin of migrations/0162_incident_main_key_held.sql
-- (TestSchemasMatch): the column exists for parity and stays NULL here.
-- PostgreSQL's writers are many connections and possibly several nodes,
-- so no process can know every open incident's key: the index keeps them
-- (as webhook_dedupe_pg.go says of the dedupe window).
ALTER TABLE incidents ADD COLUMN main_key_held TEXT;
