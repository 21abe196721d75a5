package server_test

import (
	"strings"
	"testing"
)

func init() {
	// A plan id names configuration shared by every org, not tenant data;
	// the org changed is always the caller's (TestBillingIsolation).
	isolationProbes["PUT /api/billing/plan"] = nil
	isolationProbes["POST /api/billing/checkout"] = nil
	// A period is a month, not an id; the statement is the caller's org's.
	isolationProbes["GET /api/billing/statements/{period}"] = nil
}

// TestBillingIsolation: every billing route answers for the caller's org
// only; another tenant's projects, usage and plan never show or change.
func TestBillingIsolation(t *testing.T) {
	env := billingEnv(t, "showback", "roomy")
	a, b := env.newTenant(t, "alpha"), env.newTenant(t, "bravo")
	a.owner.must(200, "PUT", "/api/billing/plan", map[string]any{"plan_id": "race"})
	for _, role := range []string{"owner", "admin", "member", "viewer"} {
		got := b.byRole[role].must(200, "GET", "/api/billing", nil)
		if strings.Contains(string(got.Body), `"race"`) || strings.Contains(string(got.Body), a.project) {
			t.Fatalf("bravo's %s sees alpha's billing: %s", role, got.Body)
		}
	}
}
