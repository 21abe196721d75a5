package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"strings"
	"testing"
	"time"
)

// writerConnOf is the writer's driver connection (nil when it is not a
// writerConn).
func writerConnOf(t *testing.T, db *DB) *writerConn {
	t.Helper()
	conn, err := db.w.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var wc *writerConn
	if err := conn.Raw(func(dc any) error { wc, _ = dc.(*writerConn); return nil }); err != nil {
		t.Fatal(err)
	}
	return wc
}

// ingestDistinct stores n deliveries of distinct groups, each opening an
// incident, and returns their event ids.
func ingestDistinct(t *testing.T, db *DB, hook *Webhook, tag string, n int) []string {
	t.Helper()
	var items []IngestItem
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s-%d", tag, i)
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%064d", i), Verification: "bearer", Body: []byte("b " + id),
			BodySize: 3, Headers: `{"user-agent":"t"}`, Alerts: `[]`}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
			Correlation: &Correlation{Keys: []string{"group:" + id}, Window: time.Hour, Title: "T" + id, Severity: "warning",
				AlertCount: 1, Fingerprints: []string{id}, Firing: true, Alerts: `[]`},
			RenderInput: func() string { return "alert " + id }}
		items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt})
	}
	res, err := db.InsertWebhookEvents(context.Background(), items)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range res {
		if r.Err != nil || r.Duplicate != "" || r.Dispatched == nil {
			t.Fatalf("delivery not stored and dispatched: %+v", r)
		}
		ids = append(ids, r.ID)
	}
	return ids
}

// flushesOn counts the statements prepared on wc that start with head.
func flushesOn(wc *writerConn, head string) int {
	n := 0
	for q := range wc.stmts {
		if strings.HasPrefix(q, head) {
			n++
		}
	}
	return n
}

func countRows(t *testing.T, db *DB, q string, args ...any) int {
	t.Helper()
	var n int
	if err := db.r.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// The group commit's flush statements run on the writer's driver
// connection (db_writer_conn.go), in the batch's transaction: they store
// what they stored through database/sql, roll back with it, and are
// prepared again on a connection that replaces a discarded one, whose
// statements are closed with it.
func TestWriterConnRunsFlushInTheTransaction(t *testing.T) {
	db, _ := openTemp(t)
	if db.pg {
		t.Skip("the writer connection is SQLite's")
	}
	ctx := context.Background()
	hook := benchWebhook(t, db)
	ids := ingestDistinct(t, db, hook, "a", 70) // 64 + 4 + 2 rows: three statement sizes
	wc := writerConnOf(t, db)
	if wc == nil {
		t.Fatal("the writer connection is not a writerConn")
	}
	if n, m := flushesOn(wc, "INSERT INTO webhook_events"), flushesOn(wc, "INSERT INTO incidents"); n != 3 || m != 3 {
		t.Fatalf("%d event and %d incident flush statements ran on the driver connection, want 3 each (64, 4, 2 rows)", n, m)
	}
	for _, id := range ids {
		e, err := db.FindWebhookEvent(ctx, hook.OrgID, hook.ProjectID, hook.TaskID, id)
		if err != nil {
			t.Fatal(err)
		}
		if e.Status != EventSkipped && e.Status != EventDispatched || e.BodySize != 3 || string(e.Body) == "" {
			t.Fatalf("event %s stored as %+v", id, e)
		}
	}
	if n := countRows(t, db, `SELECT count(*) FROM incidents WHERE title LIKE 'Ta-%' AND alert_count = 1 AND event_count = 1
		AND typeof(alert_count) = 'integer'`); n != 70 {
		t.Fatalf("%d incidents stored, want 70", n)
	}

	var incID string
	if err := db.r.QueryRowContext(ctx, `SELECT id FROM incidents LIMIT 1`).Scan(&incID); err != nil {
		t.Fatal(err)
	}
	// A transaction that fails after a direct statement leaves nothing,
	// and an int (converted as database/sql does) and a value the direct
	// path does not take (sql.NullString, through database/sql) both store.
	err := db.Write(ctx, func(tx *Tx) error {
		st := newTxStmts(tx)
		if _, err := st.exec(ctx, `INSERT INTO incident_keys (project_id, key, incident_id) VALUES (?, ?, ?)`,
			hook.ProjectID, "rolled back", incID); err != nil {
			return err
		}
		return errRollback
	})
	if err != errRollback {
		t.Fatal(err)
	}
	if wc.stmts[`INSERT INTO incident_keys (project_id, key, incident_id) VALUES (?, ?, ?)`] == nil {
		t.Fatal("the statement did not run on the driver connection")
	}
	if n := countRows(t, db, `SELECT count(*) FROM incident_keys WHERE key = 'rolled back'`); n != 0 {
		t.Fatal("a direct statement outlived its transaction's rollback")
	}
	err = db.Write(ctx, func(tx *Tx) error {
		st := newTxStmts(tx)
		q := `UPDATE incidents SET alert_count = ?, summary = COALESCE(?, 'null') WHERE id = ?`
		if _, err := st.exec(ctx, q, 41, sql.NullString{}, incID); err != nil {
			return err
		}
		_, err := st.exec(ctx, q, 42, "direct", incID)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if n := countRows(t, db, `SELECT count(*) FROM incidents WHERE id = ? AND alert_count = 42 AND typeof(alert_count) = 'integer'
		AND summary = 'direct'`, incID); n != 1 {
		t.Fatal("the int or text argument was not stored as database/sql stores it")
	}

	// database/sql discards the connection (as after an interrupted
	// statement): its statements are closed with it, and the next batch
	// prepares them on the new connection.
	conn, err := db.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	conn.Close()
	if len(wc.stmts) != 0 {
		t.Fatalf("%d statements of the discarded connection left open", len(wc.stmts))
	}
	ingestDistinct(t, db, hook, "b", 5)
	wc2 := writerConnOf(t, db)
	if wc2 == nil || wc2 == wc || flushesOn(wc2, "INSERT INTO webhook_events") != 2 {
		t.Fatal("the new writer connection did not run the flush statements")
	}
	if n := countRows(t, db, `SELECT count(*) FROM incidents WHERE title LIKE 'Tb-%'`); n != 5 {
		t.Fatalf("%d incidents after the reconnection, want 5", n)
	}
}
