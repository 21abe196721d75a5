package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store/storetest"
)

func openTemp(t testing.TB) (*DB, string) {
	t.Helper()
	if storetest.Postgres() {
		return openTempPG(t)
	}
	path := filepath.Join(t.TempDir(), "opsagent.db")
	db, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

// seedOrgTx makes a user, an org they own and the named projects, the
// tenant a store test fills; it returns the org's and the projects' ids.
func seedOrgTx(ctx context.Context, tx *Tx, name string, projects ...string) (string, []string, error) {
	u := &User{Email: name + "@example.com", Name: name}
	if err := createUserTx(ctx, tx, u); err != nil {
		return "", nil, err
	}
	o := &Organization{Name: name}
	if err := createOrgTx(ctx, tx, o, u.ID); err != nil {
		return "", nil, err
	}
	ids := make([]string, len(projects))
	for i, pn := range projects {
		p := &Project{OrgID: o.ID, Name: pn}
		if err := createProjectTx(ctx, tx, p); err != nil {
			return "", nil, err
		}
		ids[i] = p.ID
	}
	return o.ID, ids, nil
}

func TestOpenSetsPragmasAndMigratesOnce(t *testing.T) {
	sqliteOnly(t)
	db, path := openTemp(t)
	ctx := context.Background()
	var mode string
	var fk, sync int
	if err := db.w.QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode %q (%v), want wal", mode, err)
	}
	if err := db.w.QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk); err != nil || fk != 1 {
		t.Fatalf("foreign_keys %d (%v), want 1", fk, err)
	}
	if err := db.w.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&sync); err != nil || sync != 2 {
		t.Fatalf("synchronous %d (%v), want 2 (FULL)", sync, err)
	}
	// Readers cannot write.
	if _, err := db.r.ExecContext(ctx, `INSERT INTO client_errors (id, path, message, stack, user_agent, created_at) VALUES ('x','','','','','')`); err == nil {
		t.Fatal("the reader pool accepted a write")
	}
	// The database and its WAL companions are private to the server's user.
	for _, f := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(f)
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 600", f, st.Mode(), err)
		}
	}
	var n int
	db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n)
	db.Close()
	db2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	var n2 int
	db2.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM schema_migrations`).Scan(&n2)
	if n == 0 || n2 != n {
		t.Fatalf("migrations recorded: %d then %d", n, n2)
	}
}

func TestOpenRefusesNewerDatabase(t *testing.T) {
	db, path := openTemp(t)
	err := db.Write(context.Background(), func(tx *Tx) error {
		_, err := tx.ExecContext(context.Background(), `INSERT INTO schema_migrations (name, applied_at) VALUES ('9999_from_the_future.sql', ?)`, TS(tx.Now))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	_, err = reopen(context.Background(), path)
	if err == nil || !strings.Contains(err.Error(), "newer than this binary") {
		t.Fatalf("open of a newer database: got %v", err)
	}
}

func TestWriteRollsBackOnError(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	boom := errors.New("boom")
	err := db.Write(ctx, func(tx *Tx) error {
		u := &User{Email: "a@example.com", PasswordHash: "x"}
		if err := createUserTx(ctx, tx, u); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if n, _ := db.CountUsers(ctx); n != 0 {
		t.Fatalf("rolled-back write left %d users", n)
	}
	// A duplicate address is a conflict with a reason, not a raw SQLite error.
	for i := 0; i < 2; i++ {
		err = db.Write(ctx, func(tx *Tx) error { return createUserTx(ctx, tx, &User{Email: "B@example.com", PasswordHash: "x"}) })
	}
	if ErrorCode(err) != EConflict {
		t.Fatalf("duplicate: got %v, want conflict", err)
	}
}

// The prepared-statement cache serves concurrent readers and honours an
// already-cancelled context.
func TestCachedReads(t *testing.T) {
	db, _ := openTemp(t)
	ctx := context.Background()
	u := &User{Email: "c@example.com", PasswordHash: "x"}
	if err := db.Write(ctx, func(tx *Tx) error { return createUserTx(ctx, tx, u) }); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 20; j++ {
				got, err := db.FindUserByID(ctx, u.ID)
				if err != nil || got.Email != "c@example.com" {
					t.Errorf("read: %v %v", got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if _, err := db.FindUserByID(ctx, NewID()); !IsNotFound(err) {
		t.Fatalf("missing user: got %v, want not found", err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := db.FindUserByID(cancelled, u.ID); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled context: got %v", err)
	}
}

func TestTimesRoundTripAndSort(t *testing.T) {
	a := time.Date(2026, 3, 1, 9, 5, 7, 123456789, time.FixedZone("x", 3600))
	if got := ParseTS(TS(a)); !got.Equal(a.Truncate(time.Microsecond)) {
		t.Fatalf("round trip: %v vs %v", got, a)
	}
	if !(TS(a) < TS(a.Add(time.Microsecond))) || !(TS(a.Add(9*time.Second)) < TS(a.Add(10*time.Second))) {
		t.Fatal("stored times do not sort as text")
	}
	if !ParseTS("").IsZero() || !ValidID(NewID()) || ValidID("nope") {
		t.Fatal("zero time or id checks")
	}
}

// The fixed-position reader agrees with time.Parse on the stored layout,
// and hands anything else to it.
func TestParseTSFixed(t *testing.T) {
	for _, s := range []string{"2026-11-25T11:29:36.123456Z", "2024-02-29T23:59:59.000001Z", "1970-01-01T00:00:00.000000Z"} {
		want, err := time.Parse(timeLayout, s)
		if err != nil {
			t.Fatal(err)
		}
		if got := ParseTS(s); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTS(%q) = %v, want %v", s, got, want)
		}
	}
	for _, s := range []string{"2026-11-25T11:29:36Z", "2026-11-25T11:29:36.123+01:00", "2026-02-31T00:00:00.000000Z", "2026-1x-25T11:29:36.123456Z"} {
		if _, ok := parseFixedTS(s); ok {
			t.Errorf("parseFixedTS(%q) accepted a time outside the stored layout", s)
		}
	}
	if got := ParseTS("2026-11-25T11:29:36.5+01:00"); !got.Equal(time.Date(2026, 11, 25, 10, 29, 36, 5e8, time.UTC)) {
		t.Errorf("RFC 3339 fallback: %v", got)
	}
}
