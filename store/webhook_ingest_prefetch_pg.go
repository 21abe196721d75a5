package store

import (
	"strconv"
	"strings"
)

// On PostgreSQL a group commit's key and dedupe lookups are one statement
// each, whatever the batch's size: the keys go as one array parameter
// (= ANY), not as IN lists in chunks of flushChunks' sizes (a batch of 30
// ran 16+8+4+2: four statements per lookup, each with its own bind,
// executor start and portal on both sides). The indexes and the rows are
// the IN lists' (the generic plans seek incidents_main_key,
// incident_keys_pkey and webhook_events_dedupe_key by the array, as
// EXPLAIN shows). SQLite has no arrays and runs the IN lists in process.

const (
	// prefetchKeysPG is prefetchKeysStmts' query: the project, then the keys.
	prefetchKeysPG = `SELECT key FROM incident_keys WHERE project_id = ?1 AND key = ANY (?2::text[])
	UNION ALL SELECT main_key FROM incidents WHERE project_id = ?1 AND main_key = ANY (?2::text[]) AND status != 'resolved'`
	// prefetchDedupePG is prefetchDedupeStmts' query: the window's start, then the keys.
	prefetchDedupePG = `SELECT dedupe_key, task_id, body_hash, id, received_at FROM webhook_events
	WHERE received_at >= ? AND dedupe_key = ANY (?::bigint[])`
)

// pgTextArray is ss as a PostgreSQL array literal of text: every element
// quoted, its quotes and backslashes escaped (array_in's rules), so any
// text (braces, commas, quotes, NULL spelt out) is an element as it is.
func pgTextArray(ss []string) string {
	var b strings.Builder
	n := 2
	for _, s := range ss {
		n += len(s) + 3
	}
	b.Grow(n)
	b.WriteByte('{')
	for i, s := range ss {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for j := 0; j < len(s); j++ {
			if c := s[j]; c == '"' || c == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// pgInt8Array is ns as a PostgreSQL array literal of bigint.
func pgInt8Array(ns []int64) string {
	b := make([]byte, 0, 2+20*len(ns))
	b = append(b, '{')
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, n, 10)
	}
	return string(append(b, '}'))
}
