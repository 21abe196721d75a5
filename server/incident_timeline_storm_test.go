package server_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/store"
)

// An incident opened in an alert storm keeps its first timeline entry (the
// opening alert and its run) on its own row (migration 0158); the API
// serves its timeline byte for byte as it did when that entry was a row of
// incident_timeline, after joins, notes and an acknowledgement.
func TestIncidentTimelineOfStormReadsAsBefore(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	owner := env.register("owner@example.com")
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "rate_limit_per_minute": 10000})
	const groups = 12
	var wg sync.WaitGroup
	for i := 0; i < groups; i++ { // sent at once: group commits that open an incident per event
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := f.post(t, amAlert(fmt.Sprintf("storm-%02d", i), "fp", "firing"), bearer(f.secret)); r.Status != 202 {
				t.Errorf("alert %d: %d %s", i, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	f.dispatch(t)
	if r := f.post(t, amAlert("storm-00", "fp-2", "firing"), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("join: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	incs := incidentsOf(t, owner)
	if len(incs) != groups {
		t.Fatalf("%d incidents for %d groups", len(incs), groups)
	}
	joined := ""
	for _, inc := range incs {
		id := inc["id"].(string)
		if inc["event_count"].(float64) == 2 {
			joined = id
		}
		owner.must(201, "POST", "/api/incidents/"+id+"/notes", map[string]any{"text": "looking at " + id[:8]})
	}
	if joined == "" {
		t.Fatalf("no incident was joined: %v", incs)
	}
	owner.must(200, "POST", "/api/incidents/"+joined+"/acknowledge", nil)
	for _, inc := range incs {
		id := inc["id"].(string)
		onRow := owner.must(200, "GET", "/api/incidents/"+id, nil).Body
		firstEntryToRow(t, env.DB, id)
		asRow := owner.must(200, "GET", "/api/incidents/"+id, nil).Body
		if !bytes.Equal(onRow, asRow) {
			t.Fatalf("incident %s with its first entry on its row:\n%s\nas a row of incident_timeline:\n%s", id, onRow, asRow)
		}
		var detail struct {
			Timeline []struct{ Kind string } `json:"timeline"`
		}
		if err := json.Unmarshal(onRow, &detail); err != nil {
			t.Fatal(err)
		}
		// What a delivery's run left (a session, or a skip once the first
		// run failed for want of a model and held the others) depends on
		// how the group commits fell: the entries around it are fixed.
		var kinds []string
		runs := 0
		for _, e := range detail.Timeline {
			if e.Kind == "session" || e.Kind == "skipped" {
				runs++
				continue
			}
			kinds = append(kinds, e.Kind)
		}
		got, want := strings.Join(kinds, ","), "alert,note"
		if id == joined {
			want = "alert,alert,note,status"
		}
		if runs == 0 {
			t.Fatalf("timeline of %s: no entry of its run: %s", id, onRow)
		}
		if got != want {
			t.Fatalf("timeline of %s: %s, want %s", id, got, want)
		}
	}
}

// firstEntryToRow stores an incident's first timeline entry as the schema
// before migration 0158 did: a row of incident_timeline, its follow-ups in
// the row's follow column.
func firstEntryToRow(t *testing.T, db *store.DB, incidentID string) {
	t.Helper()
	ctx := context.Background()
	if err := db.Write(ctx, func(tx *store.Tx) error {
		var entry sql.NullString
		var at, title string
		if err := tx.QueryRowContext(ctx, `SELECT opened_entry, opened_at, title FROM incidents WHERE id = ?`, incidentID).Scan(&entry,
			&at, &title); err != nil {
			return err
		}
		if !entry.Valid {
			return fmt.Errorf("incident %s has no first entry on its row", incidentID)
		}
		var e struct {
			ID           string
			Data, Follow json.RawMessage
		}
		if err := json.Unmarshal([]byte(entry.String), &e); err != nil {
			return err
		}
		var follow any
		if e.Follow != nil {
			follow = string(e.Follow)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO incident_timeline (id, incident_id, at, kind, actor, text, data, follow)
			VALUES (?, ?, ?, 'alert', NULL, ?, ?, ?)`, e.ID, incidentID, at, title, string(e.Data), follow); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `UPDATE incidents SET opened_entry = NULL WHERE id = ?`, incidentID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
}
