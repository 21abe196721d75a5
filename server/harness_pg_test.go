package server_test

import "github.com/opsagent/opsagent/internal/testsrv"

// envDatabases names the PostgreSQL database of a test's data directory
// (a cluster's nodes share one; a restart after migrate-to-postgres opens
// the moved one). The servers themselves start through testsrv, which opens
// SQLite or, with OPSAGENT_TEST_ENGINE=postgres, a database of the test's
// own (internal/testsrv/engine.go).
var envDatabases envDatabaseMap

type envDatabaseMap struct{}

// Store makes servers started over dir use the database at url.
func (envDatabaseMap) Store(dir, url string) { testsrv.UseDatabase(dir, url) }
