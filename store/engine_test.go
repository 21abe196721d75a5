package store

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store/storetest"
)

// openTempPG opens a fresh database of its own on the test cluster; the
// returned "path" is its URL, which reopen understands.
func openTempPG(t testing.TB) (*DB, string) {
	t.Helper()
	u := storetest.DatabaseURL(t)
	db, err := OpenPostgres(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, u
}

// reopen opens what openTemp returned a second time.
func reopen(ctx context.Context, path string) (*DB, error) {
	if strings.HasPrefix(path, "postgres") {
		return OpenPostgres(ctx, path)
	}
	return Open(ctx, path)
}

// sqliteOnly skips a test of SQLite's own machinery (pragmas, the planner)
// when the suite runs on PostgreSQL.
func sqliteOnly(t testing.TB) {
	t.Helper()
	if storetest.Postgres() {
		t.Skip("SQLite-specific")
	}
}

func TestRebindSkipsLiteralsAndComments(t *testing.T) {
	for in, want := range map[string]string{
		`SELECT a FROM t WHERE a = ? AND b = '?' -- why?
		AND c = ? /* ? */ AND "d?" = ?`: `SELECT a FROM t WHERE a = $1 AND b = '?' -- why?
		AND c = $2 /* ? */ AND "d?" = $3`,
		`SELECT 'it''s ?', ?`:                                        `SELECT 'it''s ?', $1`,
		`SELECT ?1 + ?2, ?1`:                                         `SELECT $1 + $2, $1`,
		`INSERT OR IGNORE INTO k (a, b) VALUES (?, ?)`:               `INSERT INTO k (a, b) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
		`INSERT OR IGNORE INTO k (a) VALUES (?) RETURNING a`:         `INSERT INTO k (a) VALUES ($1) ON CONFLICT DO NOTHING RETURNING a`,
		`SELECT id FROM t WHERE json_extract(subject, '$.args') = ?`: `SELECT id FROM t WHERE (subject::jsonb ->> 'args') = $1`,
		`UPDATE t SET r = json_set(r, '$.at', ?) WHERE id = ?`:       `UPDATE t SET r = (jsonb_set(r::jsonb, '{at}', to_jsonb(CAST($1 AS TEXT))))::text WHERE id = $2`,
		`SELECT 1 FROM t ORDER BY name COLLATE NOCASE ASC`:           `SELECT 1 FROM t ORDER BY lower(name) ASC`,
		`DELETE FROM t WHERE rowid IN (SELECT rowid FROM t LIMIT ?)`: `DELETE FROM t WHERE ctid IN (SELECT ctid FROM t LIMIT $1)`,
		`SELECT 1 WHERE key LIKE ? ESCAPE '\'`:                       `SELECT 1 WHERE key ILIKE $1 ESCAPE '\'`,
	} {
		if got := pgSQL(in); got != want {
			t.Errorf("pgSQL(%q)\n got %q\nwant %q", in, got, want)
		}
	}
}

// TestSchemasMatch migrates both engines and compares what each holds:
// tables, columns (normalized type, NOT NULL, default), primary keys,
// foreign keys, indexes (unique, columns, partial condition) and triggers
// (by name: a SQLite trigger needs a PL/pgSQL twin in migrations_pg).
func TestSchemasMatch(t *testing.T) {
	lite, _ := func() (*DB, string) {
		if storetest.Postgres() {
			t.Setenv(storetest.EnvEngine, "")
			defer t.Setenv(storetest.EnvEngine, "postgres")
		}
		return openTemp(t)
	}()
	pg, _ := openTempPG(t)
	ctx := context.Background()
	a, err := sqliteSchema(ctx, lite)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pgSchema(ctx, pg)
	if err != nil {
		t.Fatal(err)
	}
	if len(a) < 40 {
		t.Fatalf("SQLite schema has only %d tables", len(a))
	}
	for name, ta := range a {
		tb, ok := b[name]
		if !ok {
			t.Errorf("table %s: only on SQLite", name)
			continue
		}
		if ta != tb {
			t.Errorf("table %s differs:\nsqlite:\n%s\npostgres:\n%s", name, ta, tb)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("table %s: only on PostgreSQL", name)
		}
	}
}

func normType(s string) string {
	switch strings.ToLower(s) {
	case "integer", "bigint":
		return "int"
	case "real", "double precision":
		return "real"
	case "blob", "bytea":
		return "blob"
	case "text":
		return "text"
	}
	return "?" + s
}

func normDefault(s string) string {
	s = strings.TrimSuffix(s, "::text")
	return strings.Trim(s, "()")
}

// pgAnyArray is how PostgreSQL prints x IN (a, b): x = ANY (ARRAY[a, b]).
var pgAnyArray = regexp.MustCompile(`=anyarray\[(.*?)\]`)

func normWhere(s string) string {
	s = strings.ToLower(s)
	s = strings.ReplaceAll(strings.ReplaceAll(s, "::text", ""), "!=", "<>")
	s = strings.NewReplacer("(", "", ")", "", " ", "", "\n", "", "\t", "").Replace(s)
	return pgAnyArray.ReplaceAllString(s, "in$1")
}

func sqliteSchema(ctx context.Context, db *DB) (map[string]string, error) {
	out := map[string]string{}
	rows, err := db.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'`)
	if err != nil {
		return nil, err
	}
	var tables []string
	for rows.Next() {
		var n string
		rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, tbl := range tables {
		var lines []string
		pk := map[int]string{}
		cr, err := db.r.QueryContext(ctx, `SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info(?)`, tbl)
		if err != nil {
			return nil, err
		}
		for cr.Next() {
			var name, typ string
			var notnull, pkn int
			var dflt *string
			if err := cr.Scan(&name, &typ, &notnull, &dflt, &pkn); err != nil {
				cr.Close()
				return nil, err
			}
			d := ""
			if dflt != nil {
				d = normDefault(*dflt)
			}
			if pkn > 0 {
				notnull = 1
				pk[pkn] = name
			}
			lines = append(lines, fmt.Sprintf("col %s %s notnull=%v default=%s", name, normType(typ), notnull == 1, d))
		}
		cr.Close()
		var pks []string
		for i := 1; i <= len(pk); i++ {
			pks = append(pks, pk[i])
		}
		lines = append(lines, "pk "+strings.Join(pks, ","))
		fr, err := db.r.QueryContext(ctx, `SELECT "table", "from", "to", on_delete FROM pragma_foreign_key_list(?)`, tbl)
		if err != nil {
			return nil, err
		}
		for fr.Next() {
			var ref, from, on string
			var to *string
			fr.Scan(&ref, &from, &to, &on)
			toCol := ""
			if to != nil {
				toCol = *to
			}
			lines = append(lines, fmt.Sprintf("fk %s -> %s(%s) on delete %s", from, ref, toCol, strings.ToLower(on)))
		}
		fr.Close()
		ir, err := db.r.QueryContext(ctx, `SELECT l.name, l."unique", l.origin, COALESCE(m.sql, '') FROM pragma_index_list(?) l
			LEFT JOIN sqlite_master m ON m.type = 'index' AND m.name = l.name`, tbl)
		if err != nil {
			return nil, err
		}
		type idx struct {
			name, origin, sql string
			unique            bool
		}
		var idxs []idx
		for ir.Next() {
			var x idx
			ir.Scan(&x.name, &x.unique, &x.origin, &x.sql)
			idxs = append(idxs, x)
		}
		ir.Close()
		for _, x := range idxs {
			if x.origin == "pk" {
				continue
			}
			cr, err := db.r.QueryContext(ctx, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, x.name)
			if err != nil {
				return nil, err
			}
			var cols []string
			for cr.Next() {
				var c string
				cr.Scan(&c)
				cols = append(cols, c)
			}
			cr.Close()
			name, where := x.name, ""
			if x.origin == "u" {
				name = "(constraint)"
			}
			if i := strings.Index(strings.ToUpper(x.sql), " WHERE "); i >= 0 {
				where = normWhere(x.sql[i+7:])
			}
			lines = append(lines, fmt.Sprintf("index %s unique=%v (%s) where %s", name, x.unique, strings.Join(cols, ","), where))
		}
		tr, err := db.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = ?`, tbl)
		if err != nil {
			return nil, err
		}
		for tr.Next() {
			var n string
			tr.Scan(&n)
			lines = append(lines, "trigger "+n)
		}
		tr.Close()
		sort.Strings(lines)
		out[tbl] = strings.Join(lines, "\n")
	}
	return out, nil
}

func pgSchema(ctx context.Context, db *DB) (map[string]string, error) {
	out := map[string][]string{}
	rows, err := db.r.QueryContext(ctx, `SELECT table_name, column_name, data_type, is_nullable, COALESCE(column_default, '')
		FROM information_schema.columns WHERE table_schema = 'public'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, name, typ, nullable, dflt string
		if err := rows.Scan(&tbl, &name, &typ, &nullable, &dflt); err != nil {
			rows.Close()
			return nil, err
		}
		out[tbl] = append(out[tbl], fmt.Sprintf("col %s %s notnull=%v default=%s", name, normType(typ), nullable == "NO", normDefault(dflt)))
	}
	rows.Close()
	// Primary keys, in key order.
	rows, err = db.r.QueryContext(ctx, `SELECT c.relname, string_agg(a.attname, ',' ORDER BY k.n)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
		CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum
		WHERE i.indisprimary AND ns.nspname = 'public' GROUP BY c.relname`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, cols string
		rows.Scan(&tbl, &cols)
		out[tbl] = append(out[tbl], "pk "+cols)
	}
	rows.Close()
	for tbl, lines := range out {
		hasPK := false
		for _, l := range lines {
			hasPK = hasPK || strings.HasPrefix(l, "pk ")
		}
		if !hasPK {
			out[tbl] = append(lines, "pk ")
		}
	}
	// Foreign keys (single-column, as the schema has).
	rows, err = db.r.QueryContext(ctx, `SELECT c.relname, a.attname, r.relname, COALESCE(ra.attname, ''), con.confdeltype
		FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace ns ON ns.oid = c.relnamespace
		JOIN pg_class r ON r.oid = con.confrelid
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = con.conkey[1]
		LEFT JOIN pg_attribute ra ON ra.attrelid = r.oid AND ra.attnum = con.confkey[1]
		WHERE con.contype = 'f' AND ns.nspname = 'public'`)
	if err != nil {
		return nil, err
	}
	ondel := map[string]string{"a": "no action", "r": "restrict", "c": "cascade", "n": "set null", "d": "set default"}
	for rows.Next() {
		var tbl, from, ref, to, del string
		rows.Scan(&tbl, &from, &ref, &to, &del)
		out[tbl] = append(out[tbl], fmt.Sprintf("fk %s -> %s(%s) on delete %s", from, ref, to, ondel[del]))
	}
	rows.Close()
	// Indexes other than primary keys; those behind a UNIQUE constraint are
	// named by the engine, so they compare by shape only.
	rows, err = db.r.QueryContext(ctx, `SELECT c.relname, ic.relname, i.indisunique,
			EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = i.indexrelid AND con.contype = 'u'),
			(SELECT string_agg(COALESCE(a.attname, ''), ',' ORDER BY k.n) FROM unnest(i.indkey) WITH ORDINALITY AS k(attnum, n)
				LEFT JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = k.attnum AND k.attnum > 0),
			COALESCE(pg_get_expr(i.indpred, i.indrelid), '')
		FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_namespace ns ON ns.oid = c.relnamespace
		WHERE ns.nspname = 'public' AND NOT i.indisprimary`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, name, cols, where string
		var unique, constraint bool
		if err := rows.Scan(&tbl, &name, &unique, &constraint, &cols, &where); err != nil {
			rows.Close()
			return nil, err
		}
		if constraint {
			name = "(constraint)"
		}
		out[tbl] = append(out[tbl], fmt.Sprintf("index %s unique=%v (%s) where %s", name, unique, cols, normWhere(where)))
	}
	rows.Close()
	rows, err = db.r.QueryContext(ctx, `SELECT DISTINCT event_object_table, trigger_name FROM information_schema.triggers
		WHERE trigger_schema = 'public'`)
	if err != nil {
		return nil, err
	}
	for rows.Next() {
		var tbl, name string
		rows.Scan(&tbl, &name)
		out[tbl] = append(out[tbl], "trigger "+name)
	}
	rows.Close()
	res := map[string]string{}
	for tbl, lines := range out {
		sort.Strings(lines)
		res[tbl] = strings.Join(lines, "\n")
	}
	return res, nil
}

// Two servers take the same advisory lock in turn, never together.
func TestAdvisoryLockExcludes(t *testing.T) {
	db, u := openTempPG(t)
	ctx := context.Background()
	db2, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db2.Close()
	unlock, err := db.AdvisoryLock(ctx, "x")
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan struct{})
	go func() {
		u2, err := db2.AdvisoryLock(ctx, "x")
		if err == nil {
			u2()
		}
		close(got)
	}()
	select {
	case <-got:
		t.Fatal("second holder got the lock while the first held it")
	case <-time.After(200 * time.Millisecond):
	}
	unlock()
	<-got
}

// doctor's view of a cluster's database: everything pending before the first
// server starts, nothing after, and it never migrates.
func TestInspectPostgres(t *testing.T) {
	u := storetest.DatabaseURL(t)
	ctx := context.Background()
	in, err := InspectPostgres(ctx, u)
	if err != nil || !in.Exists || len(in.Pending) < 20 || len(in.Unknown) != 0 {
		t.Fatalf("empty database: %+v %v", in, err)
	}
	db, err := OpenPostgres(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	if in, err = InspectPostgres(ctx, u); err != nil || len(in.Pending) != 0 || in.Integrity != "ok" {
		t.Fatalf("migrated database: %+v %v", in, err)
	}
}
