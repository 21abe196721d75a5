package store

import (
	"context"
	"fmt"
	"sort"
	"strings"
)

// Moving an appliance's state into PostgreSQL (opsagent migrate-to-postgres).
// Both databases are at the same schema version (each was migrated when
// opened), so every table is copied column by column, parents before the
// tables that reference them, in one PostgreSQL transaction: the target has
// everything or nothing.

// TableCount is one table's rows in the source and in the target.
type TableCount struct {
	Table          string
	Source, Target int64
}

// CopyReport is what a move did and what its verification found.
type CopyReport struct {
	Tables    []TableCount
	Orgs      int // organizations whose audit chain verified on the target
	Searches  int // memory searches compared between both engines
	Mismatch  []string
	AuditRows int64
}

// OK reports whether the verification found nothing wrong.
func (r *CopyReport) OK() bool { return len(r.Mismatch) == 0 }

// copyBatch bounds the rows of one INSERT.
const copyBatch = 200

// CopyTo copies every table of db (SQLite) into dst (PostgreSQL, freshly
// migrated and empty) and verifies the copy: row counts per table, each
// organization's audit chain, and memory searches answering the same rows.
func (db *DB) CopyTo(ctx context.Context, dst *DB) (*CopyReport, error) {
	if db.pg || !dst.pg {
		return nil, fmt.Errorf("copy: from SQLite to PostgreSQL only")
	}
	var users int64
	if err := dst.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM users`).Scan(&users); err != nil {
		return nil, err
	}
	if users > 0 {
		return nil, fmt.Errorf("the PostgreSQL database already holds %d accounts: move into an empty database", users)
	}
	tables, err := db.tablesByDependency(ctx)
	if err != nil {
		return nil, err
	}
	tables = triggerKeptLast(tables) // migrate_pg_counts.go
	err = dst.Write(ctx, func(tx *Tx) error {
		for _, t := range tables {
			if err := db.copyTable(ctx, tx, t); err != nil {
				return fmt.Errorf("copy %s: %w", t, err)
			}
		}
		if err := db.keyRecentDedupeEvents(ctx, tx); err != nil {
			return err
		}
		return indexHeldKeys(ctx, tx)
	})
	if err != nil {
		return nil, err
	}
	return db.verifyCopy(ctx, dst, tables)
}

// tablesByDependency lists the tables (schema_migrations aside: each
// engine records its own) with every table after those it references.
func (db *DB) tablesByDependency(ctx context.Context) ([]string, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'
		AND name NOT LIKE 'sqlite_%' AND name != 'schema_migrations' ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	deps := map[string][]string{}
	for _, n := range names {
		fr, err := db.r.QueryContext(ctx, `SELECT DISTINCT "table" FROM pragma_foreign_key_list(?)`, n)
		if err != nil {
			return nil, err
		}
		for fr.Next() {
			var ref string
			if err := fr.Scan(&ref); err != nil {
				fr.Close()
				return nil, err
			}
			if ref != n {
				deps[n] = append(deps[n], ref)
			}
		}
		fr.Close()
	}
	var out []string
	done := map[string]bool{}
	var visit func(n string, path map[string]bool) error
	visit = func(n string, path map[string]bool) error {
		if done[n] {
			return nil
		}
		if path[n] {
			return fmt.Errorf("copy: foreign keys form a cycle through %s", n)
		}
		path[n] = true
		for _, d := range deps[n] {
			if err := visit(d, path); err != nil {
				return err
			}
		}
		delete(path, n)
		done[n] = true
		out = append(out, n)
		return nil
	}
	for _, n := range names {
		if err := visit(n, map[string]bool{}); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// copyTable copies one table's rows in batches. Rows the target already
// holds were made by its migrations or by triggers on the tables copied
// before (billing's counts): the source's rows replace them.
func (db *DB) copyTable(ctx context.Context, tx *Tx, table string) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM "`+table+`"`); err != nil {
		return err
	}
	rows, err := db.r.QueryContext(ctx, `SELECT * FROM "`+table+`"`)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	quoted := make([]string, len(cols))
	for i, c := range cols {
		quoted[i] = `"` + c + `"`
	}
	one := "(" + strings.TrimSuffix(strings.Repeat("?,", len(cols)), ",") + ")"
	var batch []any
	n := 0
	flush := func() error {
		if n == 0 {
			return nil
		}
		q := `INSERT INTO "` + table + `" (` + strings.Join(quoted, ",") + `) VALUES ` +
			strings.TrimSuffix(strings.Repeat(one+",", n), ",")
		_, err := tx.ExecContext(ctx, q, batch...)
		batch, n = batch[:0], 0
		return err
	}
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		batch = append(batch, vals...)
		if n++; n == copyBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	return flush()
}

func (db *DB) verifyCopy(ctx context.Context, dst *DB, tables []string) (*CopyReport, error) {
	rep := &CopyReport{}
	sort.Strings(tables)
	for _, t := range tables {
		c := TableCount{Table: t}
		if err := db.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t+`"`).Scan(&c.Source); err != nil {
			return nil, err
		}
		if err := dst.r.QueryRowContext(ctx, `SELECT COUNT(*) FROM "`+t+`"`).Scan(&c.Target); err != nil {
			return nil, err
		}
		if c.Source != c.Target {
			rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("%s: %d rows in SQLite, %d in PostgreSQL", t, c.Source, c.Target))
		}
		if t == "audit_events" {
			rep.AuditRows = c.Target
		}
		rep.Tables = append(rep.Tables, c)
	}
	orgs, err := dst.r.QueryContext(ctx, `SELECT id FROM organizations ORDER BY id`)
	if err != nil {
		return nil, err
	}
	var ids []string
	for orgs.Next() {
		var id string
		if err := orgs.Scan(&id); err != nil {
			orgs.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	orgs.Close()
	for _, id := range ids {
		_, brk, err := dst.VerifyAuditChain(ctx, id)
		if err != nil {
			return nil, err
		}
		if brk != nil {
			rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("audit chain of organization %s breaks at seq %d (%s)", id, brk.Seq, brk.Reason))
			continue
		}
		rep.Orgs++
	}
	// Searches: each memory's title searched on both engines finds the same memories.
	rows, err := db.r.QueryContext(ctx, `SELECT org_id, COALESCE(project_id, ''), title FROM memories WHERE title != '' ORDER BY id LIMIT 20`)
	if err != nil {
		return nil, err
	}
	type probe struct{ org, project, q string }
	var probes []probe
	for rows.Next() {
		var p probe
		if err := rows.Scan(&p.org, &p.project, &p.q); err != nil {
			rows.Close()
			return nil, err
		}
		probes = append(probes, p)
	}
	rows.Close()
	for _, p := range probes {
		f := MemoryFilter{OrgID: p.org, ProjectID: p.project, Query: p.q, Limit: 100}
		a, _, err := db.FindMemories(ctx, f)
		if err != nil {
			return nil, err
		}
		b, _, err := dst.FindMemories(ctx, f)
		if err != nil {
			return nil, err
		}
		if memoryIDs(a) != memoryIDs(b) {
			rep.Mismatch = append(rep.Mismatch, fmt.Sprintf("memory search %q in organization %s: %d results on SQLite, %d on PostgreSQL", p.q, p.org, len(a), len(b)))
		}
		rep.Searches++
	}
	return rep, nil
}

func memoryIDs(ms []Memory) string {
	ids := make([]string, len(ms))
	for i := range ms {
		ids[i] = ms[i].ID
	}
	sort.Strings(ids)
	return strings.Join(ids, ",")
}
