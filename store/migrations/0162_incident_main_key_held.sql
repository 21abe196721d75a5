-- An open incident's main correlation key held in memory instead of the
-- partial index incidents_main_key (SQLite; webhook_key_memory.go). In an
-- alert storm of distinct groups every event opened an incident whose
-- main_key was one entry in random order in that index: one dirty 4 KB
-- leaf per event in the WAL and again at checkpoint. A row whose key
-- memory holds stores it here and leaves main_key NULL, so the index, its
-- predicate and the lookups through it stay as they were; rows written
-- before, past memory's cap, and every row on PostgreSQL keep main_key.
ALTER TABLE incidents ADD COLUMN main_key_held TEXT;
