package store

import (
	"context"
	"strings"
	"testing"
)

// TestCipherColumnsCoverSchema: every column of the migrated schema that
// looks like a vault ciphertext (ciphertext, *_ct) is in the registry a key
// rotation walks, and every registered column exists with its key-id column.
func TestCipherColumnsCoverSchema(t *testing.T) {
	sqliteOnly(t) // reads SQLite's catalogue; TestSchemasMatch proves PostgreSQL's has the same columns
	db, _ := openTemp(t)
	ctx := context.Background()
	rows, err := db.r.QueryContext(ctx, `SELECT m.name, p.name FROM sqlite_master m, pragma_table_info(m.name) p
		WHERE m.type = 'table' ORDER BY m.name, p.cid`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols := map[string]bool{}
	registered := map[string]bool{}
	for _, c := range CipherColumns() {
		registered[c.Table+"."+c.CT] = true
	}
	for rows.Next() {
		var table, col string
		if err := rows.Scan(&table, &col); err != nil {
			t.Fatal(err)
		}
		cols[table+"."+col] = true
		if (col == "ciphertext" || strings.HasSuffix(col, "_ct")) && !registered[table+"."+col] {
			t.Errorf("%s.%s holds vault ciphertexts but is not in cipherColumns: a key rotation would leave it undecryptable", table, col)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for _, c := range CipherColumns() {
		for _, col := range []string{c.ID, c.CT, c.KeyID} {
			if !cols[c.Table+"."+col] {
				t.Errorf("registered column %s.%s does not exist", c.Table, col)
			}
		}
	}
}
