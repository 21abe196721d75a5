package store

import (
	"fmt"
	"regexp"
	"strings"
)

// PostgreSQL spellings for the SQL of main's newer features (chat channels,
// billing, heartbeats, maintenance windows, shadow rules, postmortems). They
// are added to pgRewrites here rather than in dialect_postgres.go, so the
// engine's own list and this one change independently.

func init() {
	// channel_thread.go: an approval's chat message is recorded again when
	// it is re-posted (same approval, channel and conversation).
	addReplaceInto("channel_approval_messages", []string{"approval_id", "channel_id", "conversation"},
		[]string{"approval_id", "channel_id", "conversation", "message_ref", "created_at"})
	// channel_target.go: a webhook run's chat (its routing rule's target),
	// set again when the run is dispatched again.
	addReplaceInto("channel_session_targets", []string{"session_id"},
		[]string{"session_id", "channel_id", "conversation", "created_at"})
}

// addReplaceInto rewrites SQLite's INSERT OR REPLACE INTO table (cols)
// VALUES (...) into an upsert on the table's key: PostgreSQL has no REPLACE.
// The replaced row keeps no column of the old one on either engine (SQLite
// deletes and inserts), so every non-key column is set from the new row.
// The tables here have no ON DELETE trigger or referencing row that
// SQLite's delete-then-insert would have touched.
func addReplaceInto(table string, keys, cols []string) {
	list := strings.Join(cols, `,\s*`)
	re := regexp.MustCompile(`(?is)^(\s*)INSERT OR REPLACE INTO ` + table + `\s*\(\s*` + list + `\s*\)\s*VALUES\s*(\([^)]*\))\s*;?\s*$`)
	isKey := map[string]bool{}
	for _, k := range keys {
		isKey[k] = true
	}
	var set []string
	for _, c := range cols {
		if !isKey[c] {
			set = append(set, fmt.Sprintf("%s = EXCLUDED.%s", c, c))
		}
	}
	with := fmt.Sprintf("${1}INSERT INTO %s (%s) VALUES ${2} ON CONFLICT (%s) DO UPDATE SET %s",
		table, strings.Join(cols, ", "), strings.Join(keys, ", "), strings.Join(set, ", "))
	pgRewrites = append(pgRewrites, struct {
		re   *regexp.Regexp
		with string
	}{re, with})
}
