package store

import (
	"context"
	"fmt"
	"testing"
)

// A connection's reused queue never disturbs a query still being read: rows
// streamed behind pipelined statements read correctly while the transaction
// queues more statements into the reused buffers, and every queued row of
// every transaction is stored.
func TestPipelinedQueueReusedAcrossTransactions(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	inc := &Incident{ID: NewID()}
	if err := db.Write(ctx, func(tx *Tx) error {
		now := TS(tx.Now)
		_, err := tx.ExecContext(ctx, `INSERT INTO incidents (id, org_id, project_id, provider, title, severity, opened_at,
			last_alert_at, created_at, updated_at) VALUES (?, ?, ?, 'alertmanager', 't', 'warning', ?, ?, ?, ?)`,
			inc.ID, hook.OrgID, hook.ProjectID, now, now, now, now)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	for round := 0; round < 3; round++ {
		err := db.Write(ctx, func(tx *Tx) error {
			for i := 0; i < 20; i++ { // queued, with the query below
				if err := addTimelineTx(ctx, tx, inc.ID, "note", "", fmt.Sprintf("r%d-%02d", round, i), ""); err != nil {
					return err
				}
			}
			rows, err := tx.QueryContext(ctx, `SELECT text FROM incident_timeline WHERE incident_id = ? AND text LIKE ? ORDER BY text`,
				inc.ID, fmt.Sprintf("r%d-%%", round))
			if err != nil {
				return err
			}
			defer rows.Close()
			n := 0
			for rows.Next() {
				// Queued while the rows are read: into the reused buffers.
				if err := addTimelineTx(ctx, tx, inc.ID, "note", "", fmt.Sprintf("late-%d-%d", round, n), ""); err != nil {
					return err
				}
				var text string
				if err := rows.Scan(&text); err != nil {
					return err
				}
				if want := fmt.Sprintf("r%d-%02d", round, n); text != want {
					return fmt.Errorf("row %d read %q, want %q", n, text, want)
				}
				n++
			}
			if err := rows.Err(); err != nil {
				return err
			}
			if n != 20 {
				return fmt.Errorf("%d rows read, want 20", n)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var n int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM incident_timeline WHERE incident_id = ?`, inc.ID).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 3*40 {
		t.Fatalf("%d timeline rows stored, want %d", n, 3*40)
	}
}

// A group commit reads (a pipelined query) before its flush: the flush's
// column buffers are still the connection's from one commit to the next,
// not grown from empty every time.
func TestFlushBuffersReusedAfterPipelinedReads(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	firstCol := func() *byte {
		c, err := db.w.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		var p *byte
		if err := c.Raw(func(dc any) error {
			if s := dc.(*pgDriverConn).spare; s != nil && len(s.run.cols) > 0 && cap(s.run.cols[0]) > 0 {
				p = &s.run.cols[0][:1][0]
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return p
	}
	var first *byte
	for i := 0; i < 3; i++ {
		if _, err := db.InsertWebhookEvents(ctx, distinctAlerts(hook, 100*i, 100*i+21)); err != nil {
			t.Fatal(err)
		}
		p := firstCol()
		if p == nil {
			t.Fatalf("group commit %d: the connection kept no flush buffers", i)
		}
		if i == 0 {
			first = p
		} else if p != first {
			t.Fatalf("group commit %d gathered its rows into new buffers", i)
		}
	}
}
