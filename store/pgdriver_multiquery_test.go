package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// Pipelined queries (pgdriver_multiquery.go) answer as if each had run
// alone, in order: a query behind a queued statement sees its row, each
// result set is its query's (one with no rows included), a set left unread
// is skipped, and a failing query fails the transaction. An argument
// count that does not match is refused before anything is queued: the
// statements queued ahead still go with the transaction.
func TestPipelinedQueriesAnswerInOrder(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	session := func(id string) *AgentSession {
		return &AgentSession{ID: id, OrgID: hook.OrgID, ProjectID: hook.ProjectID}
	}
	readAll := func(rows *sql.Rows) []string {
		t.Helper()
		var got []string
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			got = append(got, s)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return got
	}
	err := db.Write(ctx, func(tx *Tx) error {
		if err := CreateAgentSessionTx(ctx, tx, session("queued-ahead")); err != nil {
			return err
		}
		rows, err := tx.Tx.QueryContext(ctx, pgPipelined(
			`SELECT x::text FROM generate_series(1, ?::int) x`,
			`SELECT id FROM agent_sessions WHERE id = ?`,
			`SELECT 'none' WHERE ? = 'no'`,
			`SELECT x::text FROM generate_series(1, 3) x`,
			`SELECT ? || '!'`,
		), 3, "queued-ahead", "yes", "last")
		if err != nil {
			return err
		}
		defer rows.Close()
		var sets [][]string
		for i := 0; i < 5; i++ {
			if i > 0 && !rows.NextResultSet() {
				return fmt.Errorf("result set %d missing: %v", i, rows.Err())
			}
			if i == 3 { // skipped unread
				continue
			}
			sets = append(sets, readAll(rows))
		}
		if rows.NextResultSet() {
			return errors.New("a sixth result set")
		}
		if got := fmt.Sprint(sets); got != "[[1 2 3] [queued-ahead] [] [last!]]" {
			return fmt.Errorf("result sets %s", got)
		}
		return rows.Close()
	})
	if err != nil {
		t.Fatal(err)
	}

	// A query that fails: the error reaches the caller, the transaction
	// (with its queued row) is rolled back.
	err = db.Write(ctx, func(tx *Tx) error {
		if err := CreateAgentSessionTx(ctx, tx, session("rolled-back")); err != nil {
			return err
		}
		rows, err := tx.Tx.QueryContext(ctx, pgPipelined(`SELECT 'a'`, `SELECT (1 / ?::int)::text`), 0)
		if err != nil {
			return err
		}
		defer rows.Close()
		readAll(rows)
		if rows.NextResultSet() {
			return errors.New("the failed query's result set")
		}
		return rows.Err()
	})
	if err == nil || !strings.Contains(err.Error(), "division by zero") {
		t.Fatalf("a failing pipelined query: %v", err)
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM agent_sessions WHERE id = 'rolled-back'`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("%d rows of the failed transaction, %v", n, err)
	}

	// Arguments that do not match: refused, and the queued row still commits.
	err = db.Write(ctx, func(tx *Tx) error {
		if err := CreateAgentSessionTx(ctx, tx, session("kept")); err != nil {
			return err
		}
		if _, err := tx.Tx.QueryContext(ctx, pgPipelined(`SELECT ?::text`, `SELECT ?::text`), "one"); err == nil {
			return errors.New("one argument for two parameters accepted")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM agent_sessions WHERE id = 'kept'`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("%d rows queued ahead of the refused query, %v", n, err)
	}
}

// A group commit's reads (stored keys, the dedupe window, webhooks, tasks,
// active runs) go to PostgreSQL in one round trip, its writes and COMMIT
// in another: two per batch, whatever its size.
func TestIngestGroupCommitTwoRoundTrips(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	if err := db.Write(ctx, func(tx *Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE tasks SET overlap_policy = 'skip' WHERE id = ?`, hook.TaskID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	trips := func() int {
		c, err := db.w.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var n int
		if err := c.Raw(func(dc any) error { n = dc.(*pgDriverConn).trips; return nil }); err != nil {
			t.Fatal(err)
		}
		return n
	}
	batch := func(from, to int) {
		t.Helper()
		res, err := db.InsertWebhookEvents(ctx, distinctAlerts(hook, from, to))
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if r.Err != nil || r.Duplicate != "" || r.Dispatched == nil {
				t.Fatalf("%+v", r)
			}
		}
	}
	batch(0, 21) // the first prepares the statements
	for _, n := range []int{21, 5} {
		before := trips()
		batch(100*n, 100*n+n)
		if got := trips() - before; got != 2 {
			t.Fatalf("a group commit of %d events made %d round trips, want 2 (its reads, then its writes and COMMIT)", n, got)
		}
	}
}

// distinctAlerts are deliveries from-to of hook, each alert its own group
// and its own body (deduplicated within a minute), dispatched inline.
func distinctAlerts(hook *Webhook, from, to int) []IngestItem {
	var items []IngestItem
	for j := from; j < to; j++ {
		id := fmt.Sprintf("rt-%d", j)
		alerts := `[{"source":"alertmanager","title":"` + id + `","status":"firing","fingerprint":"` + id + `"}]`
		e := &WebhookEvent{OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID, Provider: "alertmanager",
			Type: "alertmanager.firing", BodyHash: fmt.Sprintf("%x", sha256.Sum256([]byte(id))), Verification: "bearer",
			Body: []byte("{}"), BodySize: 2, Alerts: alerts}
		plan := &DispatchPlan{Targets: []DispatchTarget{{TargetTaskID: hook.TaskID}},
			Correlation: &Correlation{Keys: []string{"group:" + id}, Window: time.Hour, Title: id, Severity: "warning",
				AlertCount: 1, Fingerprints: []string{id}, Firing: true, Alerts: alerts},
			RenderInput: func() string { return "alert" }}
		items = append(items, IngestItem{Event: e, Plan: plan, HookUpdatedAt: hook.UpdatedAt, DedupeWindow: time.Minute})
	}
	return items
}

// The statement cache's bound is not enforced while statements are queued:
// they name their prepared statements, and deallocating them before the
// queue went would fail the transaction ("prepared statement does not
// exist").
func TestStatementCacheKeepsQueuedStatements(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	defer func(n int) { pgStmtCacheMax = n }(pgStmtCacheMax)
	err := db.Write(ctx, func(tx *Tx) error {
		if err := CreateAgentSessionTx(ctx, tx, &AgentSession{ID: "queued-1", OrgID: hook.OrgID, ProjectID: hook.ProjectID}); err != nil {
			return err
		}
		pgStmtCacheMax = 1 // full: the next new statement would evict every one
		var n int
		if err := tx.Tx.QueryRowContext(ctx, `SELECT count(*) FROM agent_sessions WHERE id = ? AND 'a fresh text' <> ''`, "queued-1").Scan(&n); err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("the queued row read back %d times", n)
		}
		rows, err := tx.Tx.QueryContext(ctx, pgPipelined(`SELECT 'another fresh text'`, `SELECT id FROM agent_sessions WHERE id = ?`), "queued-1")
		if err != nil {
			return err
		}
		return rows.Close()
	})
	if err != nil {
		t.Fatal(err)
	}
}
