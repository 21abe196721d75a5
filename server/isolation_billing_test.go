package server_test

import (
	"context"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/store"
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
	ctx := context.Background()
	s := &store.AgentSession{OrgID: a.org, ProjectID: a.project, Source: "webchat", Status: "completed", TokensIn: 918273645, Cost: 4321.9876}
	if err := env.DB.Write(ctx, func(tx *store.Tx) error { return store.CreateAgentSessionTx(ctx, tx, s) }); err != nil {
		t.Fatal(err)
	}
	period := store.Period(env.clock())
	for _, role := range []string{"owner", "admin", "member", "viewer"} {
		for _, path := range []string{"/api/billing", "/api/billing/usage", "/api/billing/usage/history", "/api/billing/usage/breakdown",
			"/api/billing/statements", "/api/billing/statements/" + period, "/api/billing/statements/" + period + "?format=csv"} {
			got := b.byRole[role].must(200, "GET", path, nil)
			body := string(got.Body)
			if strings.Contains(body, `"race"`) || strings.Contains(body, a.project) || strings.Contains(body, "918273645") || strings.Contains(body, "4321.9876") {
				t.Fatalf("bravo's %s sees alpha's billing at %s: %s", role, path, body)
			}
		}
	}
	// alpha's own breakdown does show it (the probe above can fail); the
	// marker numbers are ones no id or timestamp holds by chance.
	if got := a.owner.must(200, "GET", "/api/billing/usage/breakdown", nil); !strings.Contains(string(got.Body), a.project) {
		t.Fatalf("alpha's breakdown lacks its project: %s", got.Body)
	} else if !strings.Contains(string(got.Body), "918273645") {
		t.Fatalf("alpha's breakdown lacks its tokens: %s", got.Body)
	}
	// bravo's admin recomputing or changing its plan leaves alpha alone
	b.byRole["admin"].must(200, "POST", "/api/billing/usage/recompute", nil)
	b.byRole["admin"].must(200, "PUT", "/api/billing/plan", map[string]any{"plan_id": "metered"})
	if got := a.owner.must(200, "GET", "/api/billing", nil).JSON()["plan"].(map[string]any)["id"]; got != "race" {
		t.Fatalf("alpha's plan changed to %v", got)
	}
}
