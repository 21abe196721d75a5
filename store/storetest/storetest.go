// Package storetest gives tests a database of their own on the PostgreSQL
// cluster named by OPSAGENT_TEST_DATABASE_URL (.ci/pg-start.sh starts one).
// Only tests import it.
package storetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// EnvURL names the cluster the tests may create databases on.
const EnvURL = "OPSAGENT_TEST_DATABASE_URL"

// EnvEngine set to "postgres" runs the suites that honour it (the store's,
// the HTTP harness's) on PostgreSQL instead of SQLite.
const EnvEngine = "OPSAGENT_TEST_ENGINE"

// Postgres reports whether this run asks for the PostgreSQL engine.
func Postgres() bool { return os.Getenv(EnvEngine) == "postgres" }

// DatabaseURL creates an empty database for t, dropped when t ends, and
// returns its URL. Without a cluster the test is skipped, except in CI
// (CI=true), where a missing cluster is a failure: .ci/run starts one.
func DatabaseURL(t testing.TB) string {
	t.Helper()
	admin := os.Getenv(EnvURL)
	if admin == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: .ci/run starts a PostgreSQL cluster for this test", EnvURL)
		}
		t.Skipf("PostgreSQL test: set %s (export %s=$(.ci/pg-start.sh))", EnvURL, EnvURL)
	}
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s: %v", EnvURL, err)
	}
	b := make([]byte, 8)
	rand.Read(b)
	name := "t_" + hex.EncodeToString(b)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := adminExec(ctx, admin, `CREATE DATABASE `+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_ = adminExec(ctx, admin, `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
	})
	u.Path = "/" + name
	return u.String()
}

func adminExec(ctx context.Context, admin, sql string) error {
	c, err := pgconn.Connect(ctx, admin)
	if err != nil {
		return err
	}
	defer c.Close(ctx)
	_, err = c.Exec(ctx, sql).ReadAll()
	return err
}
