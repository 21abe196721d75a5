package store

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
)

// Inspection reads the database (query_only: a read-only open could not use
// the WAL index of a database a server has open) and never migrates or writes:
// `opsagent doctor` and `--print-config` look at a data directory that a
// running server may own.

// Inspection is what doctor reports about a database file.
type Inspection struct {
	Exists    bool
	Integrity string   // "ok" or SQLite's first complaint (PRAGMA quick_check)
	Pending   []string // migrations this binary would apply on start
	Unknown   []string // migrations applied by a newer binary: this one refuses to start
	// IncrementalVacuum: retention's deletes give pages back to the file
	// system (auto_vacuum=INCREMENTAL, the default for new databases).
	IncrementalVacuum bool
}

// Inspect reads the database at path read-only.
func Inspect(ctx context.Context, path string) (Inspection, error) {
	var in Inspection
	if _, err := os.Stat(path); err != nil {
		if os.IsNotExist(err) {
			return in, nil
		}
		return in, err
	}
	in.Exists = true
	conn, err := sql.Open("sqlite", "file:"+path+"?_pragma=query_only(1)&_pragma=busy_timeout(5000)")
	if err != nil {
		return in, err
	}
	defer conn.Close()
	rows, err := conn.QueryContext(ctx, `PRAGMA quick_check(5)`)
	if err != nil {
		return in, fmt.Errorf("not a readable SQLite database: %w", err)
	}
	var problems []string
	for rows.Next() {
		var line string
		if rows.Scan(&line) == nil && line != "ok" {
			problems = append(problems, line)
		}
	}
	rows.Close()
	in.Integrity = "ok"
	if len(problems) > 0 {
		in.Integrity = strings.Join(problems, "; ")
	}
	var autoVacuum int
	if conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&autoVacuum) == nil {
		in.IncrementalVacuum = autoVacuum == 2
	}
	applied := map[string]bool{}
	mrows, err := conn.QueryContext(ctx, `SELECT name FROM schema_migrations`)
	if err == nil {
		for mrows.Next() {
			var n string
			if mrows.Scan(&n) == nil {
				applied[n] = true
			}
		}
		mrows.Close()
	}
	entries, err := fs.ReadDir(migrationFS, "migrations")
	if err != nil {
		return in, err
	}
	known := map[string]bool{}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".sql") {
			known[e.Name()] = true
			if !applied[e.Name()] {
				in.Pending = append(in.Pending, e.Name())
			}
		}
	}
	for n := range applied {
		if !known[n] {
			in.Unknown = append(in.Unknown, n)
		}
	}
	sort.Strings(in.Pending)
	sort.Strings(in.Unknown)
	return in, nil
}
