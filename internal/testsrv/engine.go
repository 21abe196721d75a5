package testsrv

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/store/storetest"
)

// databases remembers the PostgreSQL database of each data directory, so a
// restart over the same directory reopens the same state, as it reopens the
// same SQLite file, and several servers (a cluster's nodes) can share one.
var databases sync.Map // dir -> url

// UseDatabase makes servers started over dir use the PostgreSQL database at
// url (a cluster's nodes; a server restarted after migrate-to-postgres).
func UseDatabase(dir, url string) { databases.Store(dir, url) }

// OpenStore opens the store of a test server: the SQLite file in dir, or,
// with OPSAGENT_TEST_ENGINE=postgres (or a database given by UseDatabase), a
// database of the test's own on the cluster named by
// OPSAGENT_TEST_DATABASE_URL (.ci/test-postgres.sh runs the HTTP core so).
func OpenStore(ctx context.Context, tb testing.TB, dir string) (*store.DB, error) {
	u, ok := databases.Load(dir)
	if !ok && !storetest.Postgres() {
		return store.Open(ctx, dir+"/opsagent.db")
	}
	if !ok {
		u = storetest.DatabaseURL(tb)
		databases.Store(dir, u)
	}
	return store.OpenPostgres(ctx, u.(string))
}

// logErrorsOnFailure prints the server's error and warning lines when a
// test fails: on PostgreSQL an engine difference shows up as a 500 whose
// cause is only in the log.
func logErrorsOnFailure(tb testing.TB, logs *testkit.SyncBuffer) {
	tb.Cleanup(func() {
		if !tb.Failed() {
			return
		}
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "level=ERROR") || strings.Contains(l, "level=WARN") {
				tb.Log(l)
			}
		}
	})
}
