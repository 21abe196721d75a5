package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/server"
)

// tinyPlans is an operator plan file with small limits so every quota can
// be driven to its edge through the API.
const tinyPlans = `[
 {"id": "tiny", "name": "Tiny", "selectable": true, "features": ["webhooks", "connectors", "channels", "knowledge"],
  "limits": {"members": 3, "projects": 2, "enabled_tasks": 2, "connectors": 1, "channels": 1, "knowledge_bytes": 100,
             "webhook_events_per_month": 3, "agent_runs_per_month": 2}},
 {"id": "race", "name": "Race", "selectable": true,
  "limits": {"projects": 5, "webhook_events_per_month": 4, "enabled_tasks": 6, "connectors": 3, "channels": 2,
             "members": 4, "knowledge_bytes": 500}},
 {"id": "roomy", "name": "Roomy", "selectable": true, "limits": {"projects": 50}},
 {"id": "internal", "name": "Internal", "selectable": false, "limits": {}},
 {"id": "bare", "name": "Bare", "selectable": true, "features": ["webhooks"], "limits": {}},
 {"id": "pro", "name": "Pro", "selectable": true, "monthly_price_usd": 20, "stripe_price_id": "price_pro",
  "limits": {"projects": 50},
  "stripe_meters": {"agent_runs": {"event_name": "opsagent_agent_runs", "price_id": "price_runs"}}},
 {"id": "metered", "name": "Metered", "selectable": true, "monthly_price_usd": 10,
  "unit_prices_usd": {"agent_runs": 0.5, "webhook_events": 2, "llm_cost_usd": 1.5}}
]`

// billingEnv starts a server in mode with the tiny plans file, orgs on defaultPlan.
func billingEnv(t *testing.T, mode, defaultPlan string, more ...func(*server.Config)) *testEnv {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, []byte(tinyPlans), 0o600); err != nil {
		t.Fatal(err)
	}
	return newEnv(t, append([]func(*server.Config){func(c *server.Config) {
		c.Signup, c.Billing, c.BillingPlans, c.BillingDefaultPlan = "open", mode, path, defaultPlan
	}}, more...)...)
}

// wantQuota asserts a quota refusal naming quota, limit and current use.
func wantQuota(t *testing.T, r *resp, status int, quota string, limit, current float64) {
	t.Helper()
	if r.Status != status {
		t.Fatalf("got status %d, want %d (quota %s); body %s", r.Status, status, quota, r.Body)
	}
	m := r.JSON()
	if m["code"] != "quota_exceeded" || m["quota"] != quota || m["limit"] != limit || m["current"] != current {
		t.Fatalf("got %s, want code quota_exceeded, quota %s, limit %g, current %g", r.Body, quota, limit, current)
	}
	d, _ := m["detail"].(string)
	if !strings.Contains(d, quota) || !strings.Contains(d, "limit "+strconv.FormatFloat(limit, 'f', -1, 64)) {
		t.Fatalf("detail %q does not name the quota and its limit", d)
	}
	if status == http.StatusTooManyRequests && r.Header.Get("Retry-After") == "" {
		t.Fatalf("429 without Retry-After")
	}
}

func TestBillingOffChangesNothing(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("off@example.com")
	b := c.must(200, "GET", "/api/billing", nil).JSON()
	if b["mode"] != "off" || b["plan"].(map[string]any)["id"] != "unlimited" {
		t.Fatalf("got %v, want mode off on the unlimited plan", b)
	}
	for i := range 4 {
		c.must(201, "POST", "/api/projects", map[string]any{"name": fmt.Sprintf("p%d", i)})
	}
	r := c.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "free"})
	if r.Status != 409 || r.JSON()["code"] != "billing_off" {
		t.Fatalf("plan change with billing off: got %d %s, want 409 billing_off", r.Status, r.Body)
	}
}

func TestBillingQuotaEachLimitAtAndOver(t *testing.T) {
	env := billingEnv(t, "showback", "tiny")
	c := env.register("tiny@example.com")
	org := c.orgOf()

	// projects: 2
	p1 := c.must(201, "POST", "/api/projects", map[string]any{"name": "one"}).JSON()["id"].(string)
	c.must(201, "POST", "/api/projects", map[string]any{"name": "two"})
	wantQuota(t, c.do("POST", "/api/projects", map[string]any{"name": "three"}), 402, "projects", 2, 2)
	c.Project = p1

	// enabled tasks: 2 (a disabled task is free; enabling it counts)
	createTask(t, c, map[string]any{"name": "a", "prompt": "x", "enabled": true})
	createTask(t, c, map[string]any{"name": "b", "prompt": "x", "enabled": true})
	wantQuota(t, c.do("POST", "/api/tasks", map[string]any{"name": "c", "prompt": "x", "enabled": true}), 402, "enabled_tasks", 2, 2)
	off := createTask(t, c, map[string]any{"name": "d", "prompt": "x", "enabled": false})["id"].(string)
	wantQuota(t, c.do("PATCH", "/api/tasks/"+off, map[string]any{"enabled": true}), 402, "enabled_tasks", 2, 2)

	// connectors: 1
	c.must(201, "POST", "/api/connectors", map[string]any{"name": "edge-1"})
	wantQuota(t, c.do("POST", "/api/connectors", map[string]any{"name": "edge-2"}), 402, "connectors", 1, 1)

	// channels: 1 (chat apps)
	slack := func(name string) map[string]any {
		return map[string]any{"platform": "slack", "name": name, "credentials": map[string]any{"bot_token": "xoxb-test", "signing_secret": slackSecret}}
	}
	c.must(201, "POST", "/api/channels", slack("ops-1"))
	wantQuota(t, c.do("POST", "/api/channels", slack("ops-2")), 402, "channels", 1, 1)

	// members: 3 seats, the owner plus pending invitations
	inv := "/api/organizations/" + org + "/invitations"
	c.must(201, "POST", inv, map[string]any{"email": "m1@example.com", "role": "member"})
	c.must(201, "POST", inv, map[string]any{"email": "m2@example.com", "role": "member"})
	wantQuota(t, c.do("POST", inv, map[string]any{"email": "m3@example.com", "role": "member"}), 402, "members", 3, 3)
	// re-inviting a pending address replaces its invitation: no extra seat
	c.must(201, "POST", inv, map[string]any{"email": "m2@example.com", "role": "viewer"})

	// knowledge storage: 100 bytes
	doc := func(name string, n int) *resp {
		return c.do("POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": name, "content": strings.Repeat("x", n)})
	}
	if r := doc("a.md", 60); r.Status != 201 {
		t.Fatalf("first document: got %d %s", r.Status, r.Body)
	}
	if r := doc("b.md", 40); r.Status != 201 {
		t.Fatalf("document at the limit: got %d %s", r.Status, r.Body)
	}
	wantQuota(t, doc("c.md", 1), 402, "knowledge_bytes", 100, 100)

	b := c.must(200, "GET", "/api/billing", nil).JSON()
	if b["plan"].(map[string]any)["id"] != "tiny" {
		t.Fatalf("plan: %v", b["plan"])
	}
}

// A plan without a feature refuses what needs it, whatever its limits.
func TestBillingFeaturesPerPlan(t *testing.T) {
	env := billingEnv(t, "showback", "bare")
	c := env.register("bare@example.com")
	c.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "one"}).JSON()["id"].(string)
	for path, body := range map[string]map[string]any{
		"/api/connectors":          {"name": "edge-1"},
		"/api/knowledge/documents": {"collection": "runbooks", "name": "a.md", "content": "x"},
		"/api/channels":            {"platform": "slack", "name": "ops", "credentials": map[string]any{"bot_token": "xoxb-t", "signing_secret": slackSecret}},
	} {
		r := c.do("POST", path, body)
		if r.Status != 402 || r.JSON()["code"] != "feature_not_in_plan" || !strings.Contains(r.JSON()["detail"].(string), "plan bare does not include") {
			t.Fatalf("POST %s on a plan without the feature: got %d %s, want 402 feature_not_in_plan", path, r.Status, r.Body)
		}
	}
	c.must(201, "POST", "/api/tasks", map[string]any{"name": "a", "prompt": "x", "enabled": true})
}

func TestBillingWebhookEventsMonthlyQuota(t *testing.T) {
	env := billingEnv(t, "showback", "tiny")
	c := env.register("events@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "generic", "scheme": "bearer"})
	for i := range 3 {
		if r := f.post(t, []byte(fmt.Sprintf(`{"n":%d}`, i)), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("event %d: got %d %s, want 202", i, r.Status, r.Body)
		}
	}
	wantQuota(t, f.post(t, []byte(`{"n":99}`), bearer(f.secret)), 429, "webhook_events_per_month", 3, 3)
}

// TestBillingQuotaRacing fires many creates at once at the limit: the
// check and the insert share one write transaction, so never more than
// the limit exist.
func TestBillingQuotaRacing(t *testing.T) {
	env := billingEnv(t, "showback", "race")
	c := env.register("race@example.com")
	org := c.orgOf()
	const n = 24
	statuses := make([]int, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.do("POST", "/api/projects", map[string]any{"name": fmt.Sprintf("race-%d", i)}).Status
		}()
	}
	wg.Wait()
	ok, refused := count(statuses, 201), count(statuses, 402)
	if ok != 5 || refused != n-5 {
		t.Fatalf("projects: got %d created and %d refused (%v), want 5 and %d", ok, refused, statuses, n-5)
	}
	var stored int
	if err := env.DB.Reader().QueryRow(`SELECT count(*) FROM projects WHERE org_id = ?`, org).Scan(&stored); err != nil || stored != 5 {
		t.Fatalf("projects stored: got %d (%v), want 5", stored, err)
	}

	// Webhook deliveries racing at the monthly limit (4): group commits
	// batch them, and the counter is bumped inside that same transaction.
	c.Project = c.must(200, "GET", "/api/projects", nil).List()[0]["id"].(string)
	f := newHook(t, env, c, map[string]any{"provider": "generic", "scheme": "bearer"})
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = f.post(t, []byte(fmt.Sprintf(`{"race":%d}`, i)), bearer(f.secret)).Status
		}()
	}
	wg.Wait()
	if ok, refused := count(statuses, 202), count(statuses, 429); ok != 4 || refused != n-4 {
		t.Fatalf("events: got %d accepted and %d refused (%v), want 4 and %d", ok, refused, statuses, n-4)
	}

	// Enabled tasks racing (limit 6; the webhook's task is one).
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			statuses[i] = c.do("POST", "/api/tasks", map[string]any{"name": fmt.Sprintf("t%d", i), "prompt": "x", "enabled": true}).Status
		}()
	}
	wg.Wait()
	if ok := count(statuses, 201); ok != 5 {
		t.Fatalf("enabled tasks: got %d created (%v), want 5", ok, statuses)
	}

	// The other counted quotas, each raced the same way.
	race := func(what string, want int, send func(i int) int) {
		t.Helper()
		for i := range n {
			wg.Add(1)
			go func() { defer wg.Done(); statuses[i] = send(i) }()
		}
		wg.Wait()
		if ok := count(statuses, 201); ok != want || count(statuses, 402) != n-want {
			t.Fatalf("%s: got %v, want %d created and the rest 402", what, statuses, want)
		}
	}
	race("connectors", 3, func(i int) int {
		return c.do("POST", "/api/connectors", map[string]any{"name": fmt.Sprintf("edge-%d", i)}).Status
	})
	race("channels", 2, func(i int) int {
		return c.do("POST", "/api/channels", map[string]any{"platform": "slack", "name": fmt.Sprintf("ops-%d", i),
			"credentials": map[string]any{"bot_token": "xoxb-t", "signing_secret": slackSecret}}).Status
	})
	race("member seats", 3, func(i int) int { // the owner holds the fourth
		return c.do("POST", "/api/organizations/"+org+"/invitations", map[string]any{"email": fmt.Sprintf("m%d@example.com", i), "role": "member"}).Status
	})
	race("knowledge bytes", 5, func(i int) int { // 100 bytes each, 500 allowed
		return c.do("POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": fmt.Sprintf("r%d.md", i), "content": strings.Repeat("x", 100)}).Status
	})
}

func count(xs []int, v int) int {
	n := 0
	for _, x := range xs {
		if x == v {
			n++
		}
	}
	return n
}

func TestBillingPlanChanges(t *testing.T) {
	env := billingEnv(t, "showback", "roomy")
	tn := env.newTenant(t, "plans")
	owner := tn.owner
	for i := range 3 {
		owner.must(201, "POST", "/api/projects", map[string]any{"name": fmt.Sprintf("extra-%d", i)})
	}
	// unknown plan: 422 at body.plan_id
	wantValidation(t, owner.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "platinum"}), "body", "plan_id")
	// operator-only plan
	if r := owner.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "internal"}); r.Status != 403 {
		t.Fatalf("non-selectable plan: got %d %s, want 403", r.Status, r.Body)
	}
	// downgrade below current use: explained, not applied
	r := owner.do("PUT", "/api/billing/plan", map[string]any{"plan_id": "tiny"})
	var blocked struct {
		Code       string `json:"code"`
		Detail     string `json:"detail"`
		Violations []struct {
			Quota   string  `json:"quota"`
			Limit   float64 `json:"limit"`
			Current float64 `json:"current"`
		} `json:"violations"`
	}
	if r.Status != 409 || json.Unmarshal(r.Body, &blocked) != nil || blocked.Code != "downgrade_blocked" {
		t.Fatalf("downgrade: got %d %s, want 409 downgrade_blocked", r.Status, r.Body)
	}
	if len(blocked.Violations) == 0 || blocked.Violations[0].Quota != "members" && blocked.Violations[0].Quota != "projects" {
		t.Fatalf("violations: %+v", blocked.Violations)
	}
	if !strings.Contains(blocked.Detail, "projects: 4 in use, plan tiny allows 2") {
		t.Fatalf("detail %q does not explain the projects over the limit", blocked.Detail)
	}
	if got := owner.must(200, "GET", "/api/billing", nil).JSON()["plan"].(map[string]any)["id"]; got != "roomy" {
		t.Fatalf("plan after a refused downgrade: got %v, want roomy", got)
	}
	// member and viewer read, cannot manage
	for _, role := range []string{"member", "viewer"} {
		tn.byRole[role].must(200, "GET", "/api/billing", nil)
		if r := tn.byRole[role].do("PUT", "/api/billing/plan", map[string]any{"plan_id": "race"}); r.Status != 403 {
			t.Fatalf("%s changing the plan: got %d, want 403", role, r.Status)
		}
	}
	// admin upgrades; audited
	tn.byRole["admin"].must(200, "PUT", "/api/billing/plan", map[string]any{"plan_id": "race"})
	ev := owner.must(200, "GET", "/api/audit-logs?action=billing.plan_changed", nil)
	if !strings.Contains(string(ev.Body), `"race"`) {
		t.Fatalf("plan change not audited: %s", ev.Body)
	}
}

// Every quota-guarded route documents its 402 in OpenAPI, naming the quota.
func TestBillingOpenAPIDocumentsQuotaRefusals(t *testing.T) {
	env := newEnv(t)
	var doc struct {
		Paths map[string]map[string]struct {
			Responses map[string]struct {
				Description string `json:"description"`
			} `json:"responses"`
		} `json:"paths"`
	}
	env.newClient().must(200, "GET", "/api/openapi.json", nil).decode(t, &doc)
	for route, quota := range map[string]string{"post /api/projects": "projects", "post /api/tasks": "enabled_tasks",
		"patch /api/tasks/{task_id}": "enabled_tasks", "post /api/connectors": "connectors", "post /api/channels": "channels",
		"post /api/organizations/{org_id}/invitations": "members", "post /api/knowledge/documents": "knowledge_bytes",
		"put /api/knowledge/documents/by-name": "knowledge_bytes", "post /api/webhooks/{task_id}": "webhook_events_per_month"} {
		method, path, _ := strings.Cut(route, " ")
		r, ok := doc.Paths[path][method].Responses["402"]
		if !ok || !strings.Contains(r.Description, "quota "+quota) {
			t.Errorf("%s: 402 %q does not name quota %s", route, r.Description, quota)
		}
	}
	if _, ok := doc.Paths["/api/billing/portal"]["post"].Responses["402"]; ok {
		t.Error("the billing routes stay open to a read-only org; no 402 documented there")
	}
}
