package store

// dedupeInMemory says whether the engine keeps the webhook dedupe window in
// memory (webhook_dedupe_memory.go). On PostgreSQL several servers insert
// webhook_events into one database, so no server's memory sees every event:
// every deduplicated event's dedupe_key is written and looked up in the
// index (prefetchDedupe), as before. On SQLite one process owns the file.
func (db *DB) dedupeInMemory() bool { return !db.pg }
