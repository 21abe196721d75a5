package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// keyFixture delivers Alertmanager events, one group commit each, on a
// clock the test moves, and reads back where incidents keep their keys.
type keyFixture struct {
	t    *testing.T
	db   *DB
	path string
	hook *Webhook
	now  time.Time
	n    int
}

func newKeyFixture(t *testing.T) *keyFixture {
	db, path := openTemp(t)
	f := &keyFixture{t: t, db: db, path: path, hook: benchWebhook(t, db), now: time.Now().UTC()}
	db.Now = func() time.Time { return f.now }
	return f
}

// item is one firing alert (or a transition) under keys, correlated
// within window.
func (f *keyFixture) item(window time.Duration, transition string, keys ...string) IngestItem {
	f.n++
	status := "firing"
	if transition == IncidentResolved {
		status = "resolved"
	}
	alerts := fmt.Sprintf(`[{"fingerprint":"f%d","status":%q}]`, f.n, status)
	e := &WebhookEvent{OrgID: f.hook.OrgID, ProjectID: f.hook.ProjectID, TaskID: f.hook.TaskID, Provider: "alertmanager",
		Type: "alertmanager." + status, BodyHash: fmt.Sprintf("%064d", f.n), Verification: "bearer", Body: []byte("{}"),
		BodySize: 2, Alerts: alerts}
	c := &Correlation{Keys: keys, Window: window, Title: keys[0], Severity: "warning", AlertCount: 1,
		Fingerprints: []string{fmt.Sprintf("f%d", f.n)}, Firing: status == "firing", Transition: transition, Alerts: alerts}
	return IngestItem{Event: e, Plan: &DispatchPlan{Correlation: c, NoMatch: true}, HookUpdatedAt: f.hook.UpdatedAt}
}

// send delivers one event and returns the incident it opened or joined.
func (f *keyFixture) send(window time.Duration, transition string, keys ...string) string {
	f.t.Helper()
	res, err := f.db.InsertWebhookEvents(context.Background(), []IngestItem{f.item(window, transition, keys...)})
	if err != nil {
		f.t.Fatal(err)
	}
	o := res[0].Dispatched
	if res[0].Err != nil || o == nil || len(o.Items) == 0 || o.Items[0].Kind != "incident" {
		f.t.Fatalf("event: %+v %v", o, res[0].Err)
	}
	return o.Items[0].ID
}

func (f *keyFixture) fire(keys ...string) string { return f.send(time.Hour, "", keys...) }

// where says where an incident keeps its main key: "held" (memory),
// "index" (main_key) or "none".
func (f *keyFixture) where(id string) string {
	f.t.Helper()
	var main, held sql.NullString
	if err := f.db.r.QueryRowContext(context.Background(), `SELECT main_key, main_key_held FROM incidents WHERE id = ?`,
		id).Scan(&main, &held); err != nil {
		f.t.Fatal(err)
	}
	switch {
	case main.Valid && held.Valid:
		return "both"
	case main.Valid:
		return "index"
	case held.Valid:
		return "held"
	}
	return "none"
}

func (f *keyFixture) exec(q string, args ...any) {
	f.t.Helper()
	if err := f.db.Write(context.Background(), func(tx *Tx) error {
		_, err := tx.ExecContext(context.Background(), q, args...)
		return err
	}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *keyFixture) reopen() {
	f.t.Helper()
	f.db.Close()
	db, err := reopen(context.Background(), f.path)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { db.Close() })
	f.db = db
	db.Now = func() time.Time { return f.now }
}

func same(t *testing.T, what, got, want string) {
	t.Helper()
	if got != want {
		t.Fatalf("%s: %s, want %s", what, got, want)
	}
}

// Within the window a key joins its incident, whose key memory holds
// (outside the index); once the window passed it opens a new one, which
// goes to the index while the first is open under the key. A longer
// window then sees both and takes the newest, also when the older one
// became the newest through another of its keys.
func TestKeyMemoryWindow(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	a := f.fire("k", "k2")
	same(t, "A's key", f.where(a), "held")
	if n := f.db.keyMemory().Len(); n != 1 {
		t.Fatalf("memory holds %d keys, want 1", n)
	}
	f.now = f.now.Add(30 * time.Minute)
	same(t, "join within the window", f.fire("k"), a)
	f.now = f.now.Add(61 * time.Minute)
	b := f.fire("k")
	if b == a {
		t.Fatal("an alert after the window joined the old incident")
	}
	same(t, "B's key (A is open under it)", f.where(b), "index")
	f.now = f.now.Add(time.Minute)
	same(t, "two open under k, a longer window", f.send(3*time.Hour, "", "k"), b)
	// A's other key makes A the newer one.
	f.now = f.now.Add(time.Minute)
	same(t, "A by its other key", f.send(3*time.Hour, "", "k2"), a)
	f.now = f.now.Add(time.Minute)
	same(t, "k after A's newer alert", f.send(3*time.Hour, "", "k"), a)
	same(t, "k within the hour", f.fire("k"), a)
}

// After a restart memory is empty: the project's held keys are read back
// on its first lookup, and correlation finds the same incidents.
func TestKeyMemoryAfterRestart(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	a := f.fire("a")
	b := f.fire("b")
	f.now = f.now.Add(2 * time.Hour)
	old := f.fire("old")
	f.reopen()
	if n := f.db.keyMemory().Len(); n != 0 {
		t.Fatalf("memory after the open: %d keys", n)
	}
	f.now = f.now.Add(time.Minute)
	same(t, "old after restart", f.fire("old"), old)
	if n := f.db.keyMemory().Len(); n != 1 {
		// a and b are past the hour: the load read back old only.
		t.Fatalf("memory after the load: %d keys, want 1", n)
	}
	a2 := f.fire("a")
	if a2 == a {
		t.Fatal("a joined past its window after the restart")
	}
	// A longer window reads the project's keys again, further back: b's,
	// and a's, whose slot a2 took (a goes to the index).
	same(t, "b within a day", f.send(24*time.Hour, "", "b"), b)
	same(t, "a's key", f.where(a), "index")
	same(t, "a within a day", f.send(24*time.Hour, "", "a"), a2)
}

// Resolving ends an incident's keys: the next alert opens a new incident
// (and memory holds its key again); acknowledging does not.
func TestKeyMemoryResolveAndAcknowledge(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	ctx := context.Background()
	a := f.fire("k")
	if _, err := f.db.TransitionIncident(ctx, f.hook.OrgID, f.hook.ProjectID, a, IncidentAcknowledged, "", ""); err != nil {
		t.Fatal(err)
	}
	same(t, "acknowledged", f.fire("k"), a)
	if _, err := f.db.TransitionIncident(ctx, f.hook.OrgID, f.hook.ProjectID, a, IncidentResolved, "", ""); err != nil {
		t.Fatal(err)
	}
	b := f.fire("k")
	if b == a {
		t.Fatal("an alert after the resolve joined the resolved incident")
	}
	same(t, "B's key", f.where(b), "held")
	// Resolved by its provider in a batch, then firing again in the next.
	same(t, "resolve by the provider", f.send(time.Hour, IncidentResolved, "k"), b)
	c := f.fire("k")
	if c == b {
		t.Fatal("joined the incident its provider resolved")
	}
	same(t, "C's key", f.where(c), "held")
	same(t, "C joins", f.fire("k"), c)
}

// An incident deleted (retention, its project or org) attracts nothing:
// its key opens a new incident, which memory holds.
func TestKeyMemoryDeletedIncident(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	a := f.fire("k")
	f.exec(`DELETE FROM incidents WHERE id = ?`, a)
	b := f.fire("k")
	if b == a {
		t.Fatal("joined a deleted incident")
	}
	same(t, "B's key", f.where(b), "held")
	same(t, "B joins", f.fire("k"), b)
}

// A batch that rolls back leaves memory as it was: its incident is not
// there, and the key opens (and is held for) an incident next time.
func TestKeyMemoryRolledBackBatch(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	ctx := context.Background()
	failed := errors.New("the batch fails")
	err := f.db.Write(ctx, func(tx *Tx) error {
		st := newTxStmts(tx)
		it := f.item(time.Hour, "", "k")
		if _, _, err := correlateTx(ctx, st, it.Event, it.Plan.Correlation); err != nil {
			return err
		}
		if err := st.flushPending(ctx); err != nil {
			return err
		}
		return failed
	})
	if !errors.Is(err, failed) {
		t.Fatalf("the batch: %v", err)
	}
	if n := f.db.keyMemory().Len(); n != 0 {
		t.Fatalf("memory after the rollback: %d keys", n)
	}
	a := f.fire("k")
	same(t, "A's key", f.where(a), "held")
	same(t, "A joins", f.fire("k"), a)
}

// Past the cap new incidents' keys go to the index, and both kinds join.
func TestKeyMemoryCap(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	f.db.keyMemory().limit = 1
	a := f.fire("a")
	b := f.fire("b")
	same(t, "A's key", f.where(a), "held")
	same(t, "B's key (past the cap)", f.where(b), "index")
	same(t, "A joins", f.fire("a"), a)
	same(t, "B joins", f.fire("b"), b)
}

// A held row memory does not name (its entry lost) moves to the index
// when the batch joins it, and correlation still finds it by each key.
func TestKeyMemoryUnheldOnJoin(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	a := f.fire("k", "k2")
	m := f.db.keyMemory()
	m.mu.Lock()
	clear(m.m)
	m.mu.Unlock()
	same(t, "by its other key", f.fire("k2"), a)
	same(t, "A's key", f.where(a), "index")
	same(t, "by its main key", f.fire("k"), a)
}

// A database written before migration 0162 (every main key in the index)
// keeps correlating with those incidents, and new ones are held.
func TestKeyMemoryAfterUpgrade(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	a := f.fire("a")
	f.exec(`UPDATE incidents SET main_key = main_key_held, main_key_held = NULL`)
	f.exec(`ALTER TABLE incidents DROP COLUMN main_key_held`)
	f.exec(`DELETE FROM schema_migrations WHERE name = '0162_incident_main_key_held.sql'`)
	f.reopen()
	same(t, "A's key after the upgrade", f.where(a), "index")
	same(t, "A joins", f.fire("a"), a)
	b := f.fire("b")
	same(t, "B's key", f.where(b), "held")
	same(t, "B joins", f.fire("b"), b)
	same(t, "A joins again", f.fire("a"), a)
}

// Reading a project's held keys back seeks its open incidents
// (incidents_project), not every incident of the database.
func TestHeldKeysLoadPlan(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	got := queryPlan(t, db, queryHeldKeys, "project", "2026-01-01T00:00:00.000000Z")
	if !strings.Contains(got, "incidents_project (project_id=? AND status=?)") {
		t.Fatalf("held keys' load: got %q, want a seek on incidents_project", got)
	}
}

// Entries past their project's longest window are dropped (at a batch's
// commit, or by the idle sweep when none runs); a longer window later
// reads the project's held keys back, so nothing is lost to correlation.
func TestKeyMemorySweep(t *testing.T) {
	sqliteOnly(t)
	f := newKeyFixture(t)
	m := f.db.keyMemory()
	a := f.fire("a")
	f.now = f.now.Add(62 * time.Minute)
	b := f.fire("b")
	if n := m.Len(); n != 1 {
		t.Fatalf("memory after the hour: %d keys, want 1 (b)", n)
	}
	same(t, "a within two hours", f.send(2*time.Hour, "", "a"), a)
	if n := m.Len(); n != 2 {
		t.Fatalf("memory after the longer window: %d keys, want 2", n)
	}
	f.now = f.now.Add(3 * time.Hour)
	m.sweepIdle()
	if n := m.Len(); n != 0 {
		t.Fatalf("memory after the idle sweep: %d keys", n)
	}
	same(t, "b within a day", f.send(24*time.Hour, "", "b"), b)
}
