package store

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"modernc.org/sqlite"
)

// The cached principal follows every write that changes it: revocation,
// logout-all's epoch, a role change, removal from the org, deletion of the
// org (a cascade) and of the user; each read straight after its write.
func TestReadCacheFollowsWrites(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	ctx := context.Background()
	var orgID, projID, userID, sessID, otherID string
	err := db.Write(ctx, func(tx *Tx) error {
		o, ps, err := seedOrgTx(ctx, tx, "acme", "prod")
		if err != nil {
			return err
		}
		orgID, projID = o, ps[0]
		if err := tx.QueryRowContext(ctx, `SELECT user_id FROM org_members WHERE org_id = ?`, orgID).Scan(&userID); err != nil {
			return err
		}
		other := &User{Email: "other@example.com"}
		if err := createUserTx(ctx, tx, other); err != nil {
			return err
		}
		otherID = other.ID
		if err := addMemberTx(ctx, tx, orgID, otherID, "member"); err != nil {
			return err
		}
		s := &AuthSession{ID: NewID(), UserID: otherID, Salt: []byte{1}, RefreshHash: []byte{2}, ExpiresAt: time.Now().Add(time.Hour)}
		sessID = s.ID
		return createAuthSessionTx(ctx, tx, s)
	})
	if err != nil {
		t.Fatal(err)
	}
	read := func() *Principal {
		t.Helper()
		p, err := db.FindPrincipal(ctx, otherID, sessID, orgID)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	if p := read(); p.Role != "member" || p.SessionRevoked {
		t.Fatalf("first read: %+v", p)
	}
	if _, ok := db.principals.Get(otherID + "|" + sessID + "|" + orgID); !ok {
		t.Fatal("the principal was not cached")
	}
	if _, _, err := db.ChangeMemberRole(ctx, orgID, otherID, "admin", func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if p := read(); p.Role != "admin" {
		t.Fatalf("after the role change: %+v", p)
	}
	if err := db.RevokeAllForUser(ctx, otherID, "logout_all"); err != nil {
		t.Fatal(err)
	}
	if p := read(); !p.SessionRevoked || p.TokensValidAfter.IsZero() {
		t.Fatalf("after logout-all: %+v", p)
	}
	if err := db.RemoveMember(ctx, orgID, otherID, func(string) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if p := read(); p.Role != "" {
		t.Fatalf("after removal: %+v", p)
	}

	// /me's user and MFA flag, and the project: a name change and a
	// restriction show at once.
	u, mfa, err := db.FindUserWithMFA(ctx, userID)
	if err != nil || mfa {
		t.Fatal(u, mfa, err)
	}
	u.CurrentOrgID = "changed by the caller"
	name := "Renamed"
	if _, err := db.UpdateUser(ctx, userID, UserPatch{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if u, _, err := db.FindUserWithMFA(ctx, userID); err != nil || u.Name != "Renamed" || u.CurrentOrgID == "changed by the caller" {
		t.Fatalf("after the rename: %+v %v", u, err)
	}
	v := Viewer{OrgID: orgID, UserID: otherID}
	if _, _, err := db.FindVisibleProject(ctx, v, projID); err != nil {
		t.Fatal(err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE projects SET restricted = 1 WHERE id = ?`, projID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.FindVisibleProject(ctx, v, projID); !IsNotFound(err) {
		t.Fatalf("a restricted project read through the cache: %v", err)
	}

	// Deleting the org cascades to its memberships (a foreign key's action,
	// not a statement of ours): the owner's cached role goes with it.
	ownerSess := &AuthSession{ID: NewID(), UserID: userID, Salt: []byte{1}, RefreshHash: []byte{3}, ExpiresAt: time.Now().Add(time.Hour)}
	if err := db.Write(ctx, func(tx *Tx) error { return createAuthSessionTx(ctx, tx, ownerSess) }); err != nil {
		t.Fatal(err)
	}
	if p, err := db.FindPrincipal(ctx, userID, ownerSess.ID, orgID); err != nil || p.Role != "owner" {
		t.Fatal(p, err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM organizations WHERE id = ?`, orgID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if p, err := db.FindPrincipal(ctx, userID, ownerSess.ID, orgID); err != nil || p.Role != "" {
		t.Fatalf("after the org's deletion: %+v %v", p, err)
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE users SET deleted_at = ? WHERE id = ?`, TS(tx.Now), otherID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.FindPrincipal(ctx, otherID, sessID, orgID); !IsNotFound(err) {
		t.Fatalf("a deleted user's principal: %v", err)
	}
}

// A write that commits after a reader took its stamp makes what that reader
// read unservable, however the two interleave.
func TestReadCacheStampBeforeRead(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	ctx := context.Background()
	c := NewCache[string](db, 4, GenTasks)
	stamp, ok := c.Stamp()
	if !ok {
		t.Fatal("caching is off on SQLite")
	}
	if err := db.Write(ctx, func(tx *Tx) error {
		_, _, err := seedOrgTx(ctx, tx, "a")
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE tasks SET name = name`) // no rows: nothing to mark
		return err
	}); err != nil {
		t.Fatal(err)
	}
	c.Put("k", stamp, "v")
	if _, ok := c.Get("k"); !ok {
		t.Fatal("a write to other tables invalidated the tasks group")
	}
	err := db.Write(ctx, func(tx *Tx) error {
		o, ps, err := seedOrgTx(ctx, tx, "b", "p")
		if err != nil {
			return err
		}
		if _, ok := c.Get("k"); !ok {
			t.Error("a write to other tables made the tasks group miss")
		}
		defer func() {
			// The row is written, the commit not yet: the entry must not be served.
			if _, ok := c.Get("k"); ok {
				t.Error("served while a write to tasks was under way")
			}
		}()
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks (id, org_id, project_id, name, description, prompt, agent_type, schedule, timezone,
			enabled, missed_fire_policy, overlap_policy, timeout_seconds, max_steps, max_cost_usd, template_id, created_at, updated_at)
			VALUES (?, ?, ?, 'n', '', 'p', 'general', '', 'UTC', 1, 'run_once', 'skip', 60, 10, 1, '', ?, ?)`,
			NewID(), o, ps[0], TS(tx.Now), TS(tx.Now))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := c.Get("k"); ok {
		t.Fatal("served after a task was written")
	}
	c.Put("k2", stamp, "stale")
	if _, ok := c.Get("k2"); ok {
		t.Fatal("a value read under an old stamp was stored")
	}
	for i := range 10 {
		s, _ := c.Stamp()
		c.Put(string(rune('a'+i)), s, "x")
	}
	c.mu.RLock()
	n := len(c.m)
	c.mu.RUnlock()
	if n > 4 {
		t.Fatalf("%d entries, bound 4", n)
	}
}

// The hook that invalidates the caches does not see WITHOUT ROWID tables:
// a table the caches depend on must not become one.
func TestReadCacheTablesHaveRowids(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	for table := range genTables {
		var ddl string
		if err := db.r.QueryRowContext(context.Background(), `SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?`, table).Scan(&ddl); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		if strings.Contains(strings.ToUpper(ddl), "WITHOUT ROWID") {
			t.Fatalf("%s is WITHOUT ROWID: the read caches would miss its changes", table)
		}
	}
}

// What the pre-update hook costs a row change: a transaction inserting 1,000
// rows into a table no cache follows (the commit's fsync amortised), with
// and without the hook (go test -bench PreUpdateHook ./store; BENCHMARKS.md).
func BenchmarkPreUpdateHook(b *testing.B) {
	sqliteOnly(b)
	for _, hooked := range []bool{true, false} {
		name := "hook"
		if !hooked {
			name = "nohook"
		}
		b.Run(name, func(b *testing.B) {
			db, _ := openTemp(b)
			ctx := context.Background()
			if !hooked {
				conn, err := db.w.Conn(ctx)
				if err != nil {
					b.Fatal(err)
				}
				_ = conn.Raw(func(dc any) error { dc.(sqlite.HookRegisterer).RegisterPreUpdateHook(nil); return nil })
				conn.Close()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				err := db.Write(ctx, func(tx *Tx) error {
					for j := 0; j < 1000; j++ {
						if _, err := tx.ExecContext(ctx, `INSERT INTO client_errors (id, path, message, stack, user_agent, created_at) VALUES (?, '', '', '', '', '')`, NewID()); err != nil {
							return err
						}
					}
					return nil
				})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// On PostgreSQL other servers write too, and their writes never reach this
// process's hook: the caches are off.
func TestReadCacheOffOnPostgres(t *testing.T) {
	db, _ := openTemp(t)
	c := NewCache[string](db, 4, GenTasks)
	_, ok := c.Stamp()
	if ok != !db.Shared() || (db.principals == nil) != db.Shared() {
		t.Fatalf("shared %v: cache on %v", db.Shared(), ok)
	}
	c.Put("k", 0, "v")
	if _, hit := c.Get("k"); hit && db.Shared() {
		t.Fatal("a cache hit on a shared database")
	}
}

// Readers racing a writer: a value read through the cache is never older
// than the last write that had returned before the read began.
func TestReadCacheNeverOlderThanCommitted(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	ctx := context.Background()
	var taskID string
	err := db.Write(ctx, func(tx *Tx) error {
		o, ps, err := seedOrgTx(ctx, tx, "race", "p")
		if err != nil {
			return err
		}
		taskID = NewID()
		_, err = tx.ExecContext(ctx, `INSERT INTO tasks (id, org_id, project_id, name, prompt, created_at, updated_at)
			VALUES (?, ?, ?, '0', 'p', ?, ?)`, taskID, o, ps[0], TS(tx.Now), TS(tx.Now))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache[int](db, 4, GenTasks)
	read := func(ctx context.Context) (int, error) {
		var n int
		err := db.r.QueryRowContext(ctx, `SELECT CAST(name AS INTEGER) FROM tasks WHERE id = ?`, taskID).Scan(&n)
		return n, err
	}
	var committed atomic.Int64
	stop := make(chan struct{})
	done := make(chan error, 4)
	for r := 0; r < 3; r++ {
		go func() {
			for {
				select {
				case <-stop:
					done <- nil
					return
				default:
				}
				floor := committed.Load()
				n, err := cached(ctx, c, "k", read)
				if err != nil {
					done <- err
					return
				}
				if int64(n) < floor {
					done <- fmt.Errorf("read %d after write %d had returned", n, floor)
					return
				}
			}
		}()
	}
	for i := 1; i <= 200; i++ {
		err := db.Write(ctx, func(tx *Tx) error {
			_, err := tx.ExecContext(ctx, `UPDATE tasks SET name = ? WHERE id = ?`, strconv.Itoa(i), taskID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		committed.Store(int64(i))
	}
	close(stop)
	for r := 0; r < 3; r++ {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}
