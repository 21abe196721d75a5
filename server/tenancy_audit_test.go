package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
)

// The audit log: specific and generic events, denials, sign-ins and failures,
// filters, pagination, exports, and a verify route that finds tampering.
func TestTenancyAuditLog(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup)
	tn := env.newTenant(t, "audit")
	owner := tn.owner
	owner.must(201, "POST", "/api/projects", map[string]any{"name": "second"})
	tn.byRole["viewer"].must(403, "POST", "/api/projects", map[string]any{"name": "nope"})
	env.newClient().must(401, "POST", "/api/auth/login", map[string]any{"email": "audit-owner@example.com", "password": "wrong password!"})
	owner.must(200, "PUT", "/api/me/preferences/theme", map[string]any{"value": "dark"}) // generic event
	tn.byRole["member"].must(403, "GET", "/api/audit-logs", nil)

	page := owner.must(200, "GET", "/api/audit-logs?limit=200", nil).JSON()
	actions := map[string]bool{}
	for _, it := range page["items"].([]any) {
		actions[it.(map[string]any)["action"].(string)] = true
	}
	for _, want := range []string{"project.created", "permission.denied", "auth.login_failed", "invitation.created", "invitation.accepted",
		"request.put /api/me/preferences/{key}"} {
		if !actions[want] {
			t.Errorf("no %q event in %v", want, actions)
		}
	}
	// Filters and pagination.
	p := owner.must(200, "GET", "/api/audit-logs?action=project.*&limit=1&offset=1", nil).JSON()
	if p["total"].(float64) != 2 || len(p["items"].([]any)) != 1 || p["limit"].(float64) != 1 || p["offset"].(float64) != 1 {
		t.Fatalf("filtered page: %v", p)
	}
	vid := userID(t, tn.byRole["viewer"])
	p = owner.must(200, "GET", "/api/audit-logs?outcome=denied&actor="+vid, nil).JSON()
	if p["total"].(float64) != 1 {
		t.Fatalf("denials by viewer: %v", p)
	}
	wantValidation(t, owner.do("GET", "/api/audit-logs?limit=500", nil), "query", "limit")
	wantValidation(t, owner.do("GET", "/api/audit-logs/export?format=xml", nil), "query", "format")

	// Exports carry the same events, oldest first.
	jl := owner.must(200, "GET", "/api/audit-logs/export?format=jsonl", nil)
	lines := strings.Split(strings.TrimSpace(string(jl.Body)), "\n")
	if len(lines) < int(page["total"].(float64)) {
		t.Fatalf("jsonl has %d lines, the list had %v events", len(lines), page["total"])
	}
	var first map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &first); err != nil || first["seq"].(float64) != 1 || first["prev_hash"] != store.GenesisHash {
		t.Fatalf("first jsonl line: %s", lines[0])
	}
	csv := owner.must(200, "GET", "/api/audit-logs/export?format=csv", nil)
	if !strings.HasPrefix(string(csv.Body), "id,seq,org_id") || !strings.HasPrefix(csv.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("csv: %.200s", csv.Body)
	}

	// Verify: intact, then tampered.
	v := owner.must(200, "GET", "/api/audit-logs/verify", nil).JSON()
	if v["ok"] != true || v["checked"].(float64) < 5 {
		t.Fatalf("verify: %v", v)
	}
	err := env.DB.Write(context.Background(), func(tx *store.Tx) error {
		_, err := tx.Exec(`UPDATE audit_events SET action = 'nothing.happened' WHERE org_id = ? AND seq = 3`, tn.org)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	v = owner.must(200, "GET", "/api/audit-logs/verify", nil).JSON()
	if v["ok"] != false || v["broken_seq"].(float64) != 3 || v["broken_reason"] != "hash_mismatch" {
		t.Fatalf("tampered verify: %v", v)
	}
	// Another tenant's chain is its own: a fresh org verifies clean.
	other := env.register("other@example.com")
	if v := other.must(200, "GET", "/api/audit-logs/verify", nil).JSON(); v["ok"] != true {
		t.Fatalf("other org verify: %v", v)
	}
	// Events survive a restart (the writer drains at shutdown).
	before := owner.must(200, "GET", "/api/audit-logs", nil).JSON()["total"].(float64)
	owner.must(200, "PATCH", "/api/organizations/"+tn.org, map[string]any{"name": "renamed"})
	env2 := env.Restart(openSignup)
	owner.env = env2
	after := owner.must(200, "GET", "/api/audit-logs?action=org.updated", nil).JSON()["total"].(float64)
	if after != 1 || before < 5 {
		t.Fatalf("after restart: %v org.updated events (before %v)", after, before)
	}
}
