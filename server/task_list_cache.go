package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// A page of tasks is read by every open console tab and CLI poll, and
// building it (reading 50 rows, encoding them) was nine tenths of the
// request's CPU. Pages are kept encoded, keyed by org, project and the whole
// query, and served while no task row changed since they were read (the
// store's GenTasks generation, bumped by every write transaction that
// touches the tasks table: create, update, delete, enable, run status, next
// fire; see store/readcache.go). On PostgreSQL the cache is off. The caller
// has already been authenticated and its project resolved, so the page
// holds nothing the caller may not see; the key carries the org and the
// project, so no tenant reads another's page.
const (
	taskPagesMax     = 128      // pages kept
	taskPageMaxBytes = 64 << 10 // larger pages are not kept (memory bound: 8 MiB)
)

func taskPageKey(orgID, projectID string, q *TaskListQuery) string {
	var b strings.Builder
	b.Grow(160 + len(q.Search))
	b.WriteString(orgID)
	b.WriteByte('|')
	b.WriteString(projectID)
	b.WriteByte('|')
	b.WriteString(strconv.Quote(q.Search))
	b.WriteByte('|')
	b.WriteString(q.AgentType)
	b.WriteByte('|')
	switch {
	case q.Enabled == nil:
		b.WriteByte('-')
	case *q.Enabled:
		b.WriteByte('1')
	default:
		b.WriteByte('0')
	}
	for _, t := range []*time.Time{q.CreatedAfter, q.CreatedBefore} {
		b.WriteByte('|')
		if t != nil {
			b.WriteString(t.UTC().Format(time.RFC3339Nano))
		}
	}
	b.WriteByte('|')
	b.WriteString(q.Sort)
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(q.Limit))
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(q.Offset))
	return b.String()
}

// encodeJSON is writeJSON's encoding into bytes (same escaping, same
// trailing newline).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// writeJSONBytes answers 200 with an encoded body, its length known (one
// write, no chunked encoding).
func writeJSONBytes(w http.ResponseWriter, b []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}
