package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// The shared forms of the flush statements (webhook_dispatch_shared.go)
// store exactly the rows, values and types the plain multi-row statements
// store, for every chunk size: each table's rows are written both ways in
// one transaction and read back column by column with typeof().
func TestSharedRowsStoreWhatPlainRowsStore(t *testing.T) {
	db, _ := openTemp(t)
	if db.pg {
		t.Skip("the shared forms are SQLite's")
	}
	hook := benchWebhook(t, db)
	// A value per column and row: the same in every row where the column is
	// shared, the row's own elsewhere; typed as the flush binds it.
	value := func(table, col string, shared bool, row int) any {
		r := fmt.Sprint(row)
		if shared {
			r = "s"
		}
		switch col {
		case "org_id":
			return hook.OrgID
		case "project_id":
			return hook.ProjectID
		case "task_id":
			return hook.TaskID
		case "incident_id":
			return "inc-" + fmt.Sprint(row%3)
		case "body":
			return []byte("body " + r)
		case "body_size", "alert_count", "event_count":
			if shared {
				return 7
			}
			return row + 7
		case "raw", "test":
			return shared
		case "dedupe_key", "replay_of", "actor", "idem_key":
			if shared {
				return nil
			}
			return col + " " + r
		}
		return table + "." + col + " " + r
	}
	tables := map[string]string{flushEventHead: "webhook_events", flushIncidentHead: "incidents", flushKeyHead: "incident_keys",
		flushNewKeyHead: "incident_keys", flushTimelineHead: "incident_timeline"}
	for head, static := range sharedCols {
		// The shared form, and with maybeSharedCols' columns bound once too.
		forms := [][]bool{static}
		if maybe := maybeSharedCols[head]; maybe != nil {
			if len(maybe) != len(static) {
				t.Fatalf("%s: %d columns shared, %d maybe", head, len(static), len(maybe))
			}
			all := make([]bool, len(static))
			for i := range all {
				all[i] = static[i] || maybe[i]
			}
			forms = append(forms, all)
		}
		for i, shared := range forms {
			testSharedForm(t, db, hook, head, tables[head], static, shared, i > 0, value)
		}
	}
	// A value that differs in a shared column, or one that does not
	// compare, takes the plain statement.
	if _, ok := sharedArgs([]bool{true, false}, 2, []any{"a", 1, "b", 2}, nil); ok {
		t.Fatal("rows with different shared values share")
	}
	if _, ok := sharedArgs([]bool{true, false}, 2, []any{[]byte("a"), 1, []byte("a"), 2}, nil); ok {
		t.Fatal("bytes compared as shared")
	}
	if args, ok := sharedArgs([]bool{false, true, false}, 3, []any{1, nil, "x", 2, nil, "y"}, nil); !ok ||
		!reflect.DeepEqual(args, []any{nil, 1, "x", 2, "y"}) {
		t.Fatalf("shared args: %v %v", args, ok)
	}
	// A maybe-shared column is bound once only when every row agrees.
	if bits, mask := moreShared([]bool{true, false, false}, []bool{false, true, true}, 3, []any{1, "a", "x", 1, "a", "y"},
		nil); bits != 2 || !reflect.DeepEqual(mask, []bool{true, true, false}) {
		t.Fatalf("maybe-shared columns: %b %v", bits, mask)
	}
}

// testSharedForm writes head's rows with the plain statement and with the
// shared form binding shared's columns once, every chunk size, and
// compares what each stored; the rows agree in shared's columns, and when
// picked insertRows (moreShared) takes that form for them.
func testSharedForm(t *testing.T, db *DB, hook *Webhook, head, table string, static, shared []bool, picked bool,
	value func(table, col string, shared bool, row int) any) {
	ctx := context.Background()
	cols := strings.Split(strings.TrimSuffix(strings.TrimSpace(head[strings.Index(head, "(")+1:]), ") VALUES"), ",")
	for i := range cols {
		cols[i] = strings.TrimSpace(cols[i])
	}
	if len(cols) != len(shared) {
		t.Fatalf("%s: %d columns, %d marked", table, len(cols), len(shared))
	}
	for _, n := range flushChunks[:len(flushChunks)-1] {
		var args []any
		for row := 0; row < n; row++ {
			for i, c := range cols {
				args = append(args, value(table, c, shared[i], row))
			}
		}
		var read []string
		sel := make([]string, 0, 2*len(cols))
		for _, c := range cols {
			sel = append(sel, c, "typeof("+c+")")
		}
		q := `SELECT ` + strings.Join(sel, ", ") + ` FROM ` + table + ` ORDER BY ` + strings.Join(cols, ", ")
		form := sharedRowsStmt(head, shared, n)
		if maybe := maybeSharedCols[head]; maybe != nil && picked {
			if _, mask := moreShared(static, maybe, len(cols), args, nil); !reflect.DeepEqual(mask, shared) {
				t.Fatalf("%s, %d rows: insertRows binds %v once, want %v", table, n, mask, shared)
			}
		}
		for _, stmt := range []string{flushStmts[head][n], form} {
			stmtArgs := args
			if stmt == form {
				var ok bool
				if stmtArgs, ok = sharedArgs(shared, len(cols), args, nil); !ok {
					t.Fatalf("%s: rows of one shared value do not share", table)
				}
			}
			err := db.Write(ctx, func(tx *Tx) error {
				if table == "incident_keys" || table == "incident_timeline" {
					for i := 0; i < 3; i++ {
						if _, err := tx.ExecContext(ctx, `INSERT INTO incidents (id, org_id, project_id, provider, title, severity,
							opened_at, last_alert_at, created_at, updated_at) VALUES (?, ?, ?, 'p', 't', 's', 'a', 'a', 'a', 'a')`,
							fmt.Sprint("inc-", i), hook.OrgID, hook.ProjectID); err != nil {
							return err
						}
					}
				}
				if _, err := tx.ExecContext(ctx, stmt, stmtArgs...); err != nil {
					return err
				}
				rows, err := tx.QueryContext(ctx, q)
				if err != nil {
					return err
				}
				defer rows.Close()
				var got []string
				for rows.Next() {
					vals := make([]any, len(sel))
					ptrs := make([]any, len(sel))
					for i := range vals {
						ptrs[i] = &vals[i]
					}
					if err := rows.Scan(ptrs...); err != nil {
						return err
					}
					got = append(got, fmt.Sprintf("%q", vals))
				}
				if err := rows.Err(); err != nil {
					return err
				}
				if read == nil {
					read = got
				} else if !reflect.DeepEqual(read, got) {
					t.Errorf("%s, %d rows: plain stored\n%v\nshared stored\n%v", table, n, read, got)
				}
				if len(got) != n {
					t.Errorf("%s, %d rows: read %d", table, n, len(got))
				}
				return errRollback
			})
			if err != errRollback {
				t.Fatalf("%s, %d rows: %v", table, n, err)
			}
		}
	}
}

var errRollback = fmt.Errorf("rollback")
