package secrets_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// newKeeper opens a keeper over a fresh data directory with one org.
func newKeeper(tb testing.TB) (*secrets.Keeper, string) {
	tb.Helper()
	dir := tb.TempDir()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(dir, "opsagent.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { db.Close() })
	v, err := vault.Open(filepath.Join(dir, "vault"), "", nil)
	if err != nil {
		tb.Fatal(err)
	}
	org, err := db.CreateAccount(ctx, &store.User{Email: "bench@example.com", PasswordHash: "x"})
	if err != nil {
		tb.Fatal(err)
	}
	return secrets.New(db, v, filepath.Join(dir, "vault"), "", nil), org.ID
}

// BenchmarkPut measures storing one org secret (encrypt + one write transaction, synchronous=FULL).
func BenchmarkPut(b *testing.B) {
	k, org := newKeeper(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, _, err := k.Put(ctx, secrets.PutInput{OrgID: org, Name: fmt.Sprintf("S_%d", i%400), Value: []byte("value-of-a-typical-api-token-0123456789")}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRotate400 measures a full rotation of 400 secrets (the per-scope limit is 500).
func BenchmarkRotate400(b *testing.B) {
	k, org := newKeeper(b)
	ctx := context.Background()
	for i := range 400 {
		if _, _, err := k.Put(ctx, secrets.PutInput{OrgID: org, Name: fmt.Sprintf("S_%d", i), Value: []byte("v")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		rep, err := k.Rotate(ctx, 0)
		if err != nil || rep.Reencrypted != 400 {
			b.Fatalf("%+v %v", rep, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*400), "µs/secret")
}

// BenchmarkResolve20 measures resolving the 20 secrets an agent run injects.
func BenchmarkResolve20(b *testing.B) {
	k, org := newKeeper(b)
	ctx := context.Background()
	for i := range 20 {
		if _, _, err := k.Put(ctx, secrets.PutInput{OrgID: org, Name: fmt.Sprintf("S_%d", i), Value: []byte("v")}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		vals, err := k.Resolve(ctx, org, "")
		if err != nil || len(vals) != 20 {
			b.Fatal(err)
		}
	}
}
