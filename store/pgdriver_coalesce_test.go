package store

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"testing"
)

// Every flush statement's rows can be gathered into an unnest statement
// (pgdriver_coalesce.go): a column type the arrays do not carry would
// silently send the statements one by one again.
func TestFlushStatementsCoalesce(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	conn, err := db.w.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	err = conn.Raw(func(c any) error {
		dc := c.(*pgDriverConn)
		for head, byN := range flushStmts {
			for n, q := range byN {
				sd, err := dc.prepared(ctx, pgSQL(q))
				if err != nil {
					return err
				}
				co, err := dc.coalescer(ctx, sd)
				if err != nil {
					return err
				}
				if co == nil {
					return fmt.Errorf("%d rows of %.40s... are not gathered", n, head)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Rows gathered from several flush statements are stored exactly as the
// statements would have stored them: NULLs, bytes that are not text,
// 64-bit numbers, flags, and statements of other tables in between.
func TestCoalescedRowsKeepTheirValues(t *testing.T) {
	db, _ := openTempPG(t)
	ctx := context.Background()
	hook := benchWebhook(t, db)
	type row struct {
		id        string
		idem      any
		body      []byte
		size      int64
		raw, test bool
		key       any
	}
	rows := []row{
		{id: NewID(), idem: nil, body: []byte{0, 1, 2, 0xff, 0xfe}, size: -1, raw: true, key: int64(1<<60 - 1)},
		{id: NewID(), idem: "idem-ü", body: nil, size: 1 << 40, test: true, key: nil},
		{id: NewID(), idem: nil, body: nil, size: 0, key: int64(0)},
		{id: NewID(), idem: nil, body: []byte{}, size: 0, key: int64(0)},
		{id: NewID(), idem: "k2", body: []byte("{\"a\":\"\\u0000\"}"), size: 7, raw: true, test: true, key: int64(-5)},
		{id: NewID(), idem: nil, body: []byte("x"), size: 1, key: int64(42)},
		{id: NewID(), idem: nil, body: []byte("last"), size: 4, key: int64(43)},
	}
	args := func(rs []row) []any {
		var a []any
		for _, r := range rs {
			var body any = r.body // a nil []byte, as InsertWebhookEvents passes a dropped body: NULL
			if r.id == rows[2].id {
				body = nil
			}
			a = append(a, r.id, hook.OrgID, hook.ProjectID, hook.TaskID, "2026-11-27T19:00:00.000000Z", "alertmanager", "t",
				r.idem, "hash-"+r.id, "bearer", "{}", body, r.size, r.raw, "[]", EventSkipped, "[]", "", nil, r.test, nil, r.key)
		}
		return a
	}
	err := db.Write(ctx, func(tx *Tx) error {
		if _, err := tx.ExecContext(ctx, flushStmts[flushEventHead][4], args(rows[:4])...); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, flushStmts[flushEventHead][1], args(rows[4:5])...); err != nil {
			return err
		}
		// Another statement in between closes the run.
		if _, err := tx.ExecContext(ctx, `UPDATE tasks SET description = description WHERE id = ?`, hook.TaskID); err != nil {
			return err
		}
		for _, r := range rows[5:] {
			if _, err := tx.ExecContext(ctx, flushStmts[flushEventHead][1], args([]row{r})...); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		var idem sql.NullString
		var body []byte
		var size, raw, test int64
		var key sql.NullInt64
		if err := db.r.QueryRowContext(ctx, `SELECT idem_key, body, body_size, raw, test, dedupe_key FROM webhook_events WHERE id = ?`,
			r.id).Scan(&idem, &body, &size, &raw, &test, &key); err != nil {
			t.Fatal(err)
		}
		wantIdem, _ := r.idem.(string)
		wantKey, _ := r.key.(int64)
		if idem.Valid != (r.idem != nil) || idem.String != wantIdem || !bytes.Equal(body, r.body) || (body == nil) != (r.body == nil) ||
			size != r.size || (raw == 1) != r.raw || (test == 1) != r.test || key.Valid != (r.key != nil) || key.Int64 != wantKey {
			t.Fatalf("row %s read back as idem %v body %v size %d raw %d test %d key %v, want %+v", r.id, idem, body, size, raw, test, key, r)
		}
	}
}
