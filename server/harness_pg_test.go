package server_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// envDatabases remembers the PostgreSQL database of each test's data
// directory, so Restart reopens the same state as it reopens the same file.
var envDatabases sync.Map // dir -> url

// openEnvStore opens the store of a test server: the SQLite file in dir, or,
// with OPSAGENT_TEST_ENGINE=postgres, a database of the test's own on the
// cluster (make the core suite run there: .ci/run's PostgreSQL pass).
func openEnvStore(ctx context.Context, t testing.TB, dir string) (*store.DB, error) {
	u, ok := envDatabases.Load(dir) // a cluster's node (newCluster), or a restart
	if !ok && !storetest.Postgres() {
		return store.Open(ctx, dir+"/opsagent.db")
	}
	if !ok {
		u = storetest.DatabaseURL(t)
		envDatabases.Store(dir, u)
	}
	return store.OpenPostgres(ctx, u.(string))
}

// logErrorsOnFailure prints the server's error and warning lines when a
// test fails: on PostgreSQL an engine difference shows up as a 500 whose
// cause is only in the log.
func logErrorsOnFailure(t testing.TB, logs interface{ String() string }) {
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
				t.Log(l)
			}
		}
	})
}

// applianceOnly skips a test of something only the appliance has (its
// SQLite file, a data-directory archive) when the suite runs on PostgreSQL.
func applianceOnly(t *testing.T, why string) {
	t.Helper()
	if storetest.Postgres() {
		t.Skip("appliance (SQLite) only: " + why)
	}
}
