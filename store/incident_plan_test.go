package store

import (
	"strings"
	"testing"
)

// A resolve deletes its incident's keys by a seek on incident_keys_incident,
// not a walk of every key of the project (one per incident a storm opened:
// the resolved notifications after a storm slowed as it had grown).
func TestResolvedIncidentKeysDeleteSeeks(t *testing.T) {
	sqliteOnly(t)
	db, _ := openTemp(t)
	got := queryPlan(t, db, deleteIncidentKeys, "project", "incident")
	if !strings.Contains(got, "incident_keys_incident (incident_id=?") {
		t.Fatalf("resolve's key delete: got %q, want a seek on incident_keys_incident", got)
	}
}
