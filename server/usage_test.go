package server_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// seedSession adds a finished session straight to the store (sources and
// triggers that chat cannot produce), created ago before now.
func seedSession(t *testing.T, env *testEnv, s *store.AgentSession, ago time.Duration) *store.AgentSession {
	t.Helper()
	ctx := context.Background()
	at := store.TS(time.Now().UTC().Add(-ago))
	if err := env.DB.Write(ctx, func(tx *store.Tx) error {
		if err := store.CreateAgentSessionTx(ctx, tx, s); err != nil {
			return err
		}
		// Back-dated by hand: the clock is shared with the server's own writers.
		_, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET created_at = ?, last_activity = ? WHERE id = ?`, at, at, s.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	return s
}

// The session index: every filter, every sort, the bounds.
func TestSessionIndexFiltersSortsBounds(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("cheap").WithUsage(100, 10), llmfake.Text("dear").WithUsage(2000, 500))
	env := newEnv(t, withLLM(fake))
	c := env.register("index@example.com")
	pid := withProject(t, env, c)
	org := orgOf(t, c)
	cheap, _ := chat(t, c, map[string]any{"message": "Why is nginx slow?"})
	dear, _ := chat(t, c, map[string]any{"message": "Audit the database backups"})
	tg := seedSession(t, env, &store.AgentSession{OrgID: org, ProjectID: pid, Title: "telegram question", Source: "telegram",
		TriggerSource: "manual", Status: store.SessionFailed, Cost: 0.5, TokensIn: 10, DurationMS: 9000}, 48*time.Hour)
	task := seedSession(t, env, &store.AgentSession{OrgID: org, ProjectID: pid, Title: "nightly", TaskName: "nightly disk check",
		Source: "task", TriggerSource: "scheduled", Status: store.SessionTimeout, Cost: 2.0, TokensIn: 5000, DurationMS: 1000}, 72*time.Hour)

	ids := func(q string) []string {
		t.Helper()
		r := c.must(200, "GET", "/api/sessions/index?"+q, nil).JSON()
		var out []string
		for _, it := range r["items"].([]any) {
			out = append(out, it.(map[string]any)["id"].(string))
		}
		if int(r["total"].(float64)) < len(out) {
			t.Fatalf("total %v below the page", r["total"])
		}
		return out
	}
	eq := func(q string, want ...string) {
		t.Helper()
		if got := ids(q); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: got %v, want %v", q, got, want)
		}
	}
	eq("sort=created_at&sort_dir=asc", task.ID, tg.ID, cheap, dear)
	eq("", dear, cheap, tg.ID, task.ID)          // last_activity desc
	eq("sort=cost", dear, task.ID, tg.ID, cheap) // dear: (2000*1000 + 500*2000)/1e6 = $3
	eq("sort=tokens&sort_dir=asc", tg.ID, cheap, dear, task.ID)
	eq("sort=duration&sort_dir=desc&source=telegram", tg.ID)
	eq("sort=status&sort_dir=asc", cheap, dear, tg.ID, task.ID) // ties by id, in the same direction
	eq("source=web&sort=created_at&sort_dir=asc", cheap, dear)
	eq("source=webchat&sort=created_at&sort_dir=asc", cheap, dear)
	eq("source=task", task.ID)
	eq("trigger_source=scheduled", task.ID)
	eq("status=failed", tg.ID)
	eq("q=NGINX", cheap)
	eq("q=nightly%20disk", task.ID)
	eq("q="+dear[:20], dear)
	eq("min_cost=0.5&max_cost=2&sort=cost", task.ID, tg.ID)
	eq("created_after="+time.Now().UTC().Add(-60*time.Hour).Format(time.RFC3339)+"&sort=created_at&sort_dir=asc", tg.ID, cheap, dear)
	eq("created_before="+time.Now().UTC().Add(-60*time.Hour).Format(time.RFC3339), task.ID)
	page := c.must(200, "GET", "/api/sessions/index?limit=2&offset=1&sort=created_at&sort_dir=asc", nil).JSON()
	if page["total"].(float64) != 4 || page["limit"].(float64) != 2 || page["offset"].(float64) != 1 || len(page["items"].([]any)) != 2 {
		t.Fatalf("page: %v", page)
	}
	for _, bad := range []struct{ q, field string }{
		{"limit=201", "limit"}, {"limit=0", "limit"}, {"offset=-1", "offset"}, {"sort=name", "sort"}, {"sort_dir=up", "sort_dir"},
		{"source=email", "source"}, {"status=done", "status"}, {"trigger_source=cron", "trigger_source"},
		{"min_cost=-1", "min_cost"}, {"max_cost=abc", "max_cost"}, {"created_after=yesterday", "created_after"},
		{"min_cost=3&max_cost=1", "min_cost"},
	} {
		wantValidation(t, c.do("GET", "/api/sessions/index?"+bad.q, nil), "query", bad.field)
	}

	// The legacy list: array, default 50, q over title and first prompt, source by channel name.
	legacy := c.must(200, "GET", "/api/sessions?source=webchat&q=database", nil).List()
	if len(legacy) != 1 || legacy[0]["id"] != dear || legacy[0]["tokens"].(float64) != 2500 {
		t.Fatalf("legacy list: %v", legacy)
	}
	if n := len(c.must(200, "GET", "/api/sessions?limit=200", nil).List()); n != 4 {
		t.Fatalf("legacy list has %d", n)
	}
	wantValidation(t, c.do("GET", "/api/sessions?limit=201", nil), "query", "limit")
	wantValidation(t, c.do("GET", "/api/sessions?source=web", nil), "query", "source")
}

// Usage and dashboard figures equal the sums of the sessions they count.
func TestUsageAndDashboardsMatchSessions(t *testing.T) {
	t.Parallel()
	fake := llmfake.New(t, llmfake.Text("a").WithUsage(1000, 100), llmfake.Text("b").WithUsage(3000, 400))
	env := newEnv(t, withLLM(fake))
	c := env.register("usage@example.com")
	pid := withProject(t, env, c)
	org := orgOf(t, c)
	chat(t, c, map[string]any{"message": "first"})
	chat(t, c, map[string]any{"message": "second", "agent_type": "sre"})
	taskID := createTask(t, c, map[string]any{"name": "backup audit", "prompt": "audit"})["id"].(string)
	seedSession(t, env, &store.AgentSession{OrgID: org, ProjectID: pid, TaskID: taskID, TaskName: "backup audit", AgentType: "database",
		Source: "task", TriggerSource: "scheduled", Status: store.SessionCompleted, Cost: 0.25, TokensIn: 700, TokensOut: 70}, 10*24*time.Hour)
	seedSession(t, env, &store.AgentSession{OrgID: org, ProjectID: pid, Source: "slack", TriggerSource: "manual",
		Status: store.SessionFailed, Cost: 9, TokensIn: 9000, TokensOut: 900}, 60*24*time.Hour)

	// Reference sums from the session index itself.
	sum := func(days int) (n int, in, out float64, cost float64) {
		q := "/api/sessions/index?limit=200"
		if days > 0 {
			q += "&created_after=" + time.Now().UTC().Add(-time.Duration(days)*24*time.Hour).Format(time.RFC3339)
		}
		for _, it := range c.must(200, "GET", q, nil).JSON()["items"].([]any) {
			m := it.(map[string]any)
			n++
			in += m["tokens_in"].(float64)
			out += m["tokens_out"].(float64)
			cost += m["cost"].(float64)
		}
		return
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	for _, p := range []struct {
		period string
		days   int
	}{{"7d", 7}, {"30d", 30}, {"90d", 90}, {"all", 0}} {
		n, in, out, cost := sum(p.days)
		u := c.must(200, "GET", "/api/usage/summary?period="+p.period, nil).JSON()
		if int(u["sessions"].(float64)) != n || u["tokens_in"].(float64) != in || u["tokens_out"].(float64) != out || !near(u["cost"].(float64), cost) {
			t.Fatalf("summary %s = %v; the index sums to %d sessions, %v/%v tokens, $%v", p.period, u, n, in, out, cost)
		}
	}
	// Chats: (1000*1000 + 100*2000)/1e6 = 1.2 and (3000*1000 + 400*2000)/1e6 = 3.8.
	if u := c.must(200, "GET", "/api/usage/summary?period=7d", nil).JSON(); !near(u["cost"].(float64), 5.0) {
		t.Fatalf("7d cost: %v", u)
	}
	trend := c.must(200, "GET", "/api/usage/trend?period=30d", nil).List()
	var trendCost float64
	for _, d := range trend {
		trendCost += d["cost"].(float64)
	}
	if _, _, _, want := sum(30); len(trend) < 30 || len(trend) > 31 || !near(trendCost, want) {
		t.Fatalf("trend: %d days summing $%v", len(trend), trendCost)
	}
	byAgent := c.must(200, "GET", "/api/usage/by-agent?period=30d", nil).List()
	if len(byAgent) != 3 || byAgent[0]["agent_type"] != "sre" || !near(byAgent[0]["cost"].(float64), 3.8) {
		t.Fatalf("by agent: %v", byAgent)
	}
	byTask := c.must(200, "GET", "/api/usage/by-task?period=all", nil).List()
	if len(byTask) != 1 || byTask[0]["task_id"] != taskID || byTask[0]["task_name"] != "backup audit" || !near(byTask[0]["cost"].(float64), 0.25) {
		t.Fatalf("by task: %v", byTask)
	}
	top := c.must(200, "GET", "/api/usage/top-sessions?period=all&limit=2", nil).List()
	if len(top) != 2 || !near(top[0]["cost"].(float64), 9) || !near(top[1]["cost"].(float64), 3.8) {
		t.Fatalf("top sessions: %v", top)
	}
	for _, bad := range []struct{ path, field string }{
		{"/api/usage/summary?period=1y", "period"}, {"/api/usage/trend?period=all", "period"},
		{"/api/usage/by-task?limit=51", "limit"}, {"/api/usage/top-sessions?limit=0", "limit"},
		{"/api/usage/by-agent?period=365d", "period"}, {"/api/dashboard/agent-funnel?days=91", "days"},
		{"/api/dashboard/agent-funnel?days=0", "days"},
	} {
		wantValidation(t, c.do("GET", bad.path, nil), "query", bad.field)
	}

	stats := c.must(200, "GET", "/api/dashboard/stats", nil).JSON()
	sessions := stats["sessions"].(map[string]any)
	if sessions["total"].(float64) != 4 || sessions["completed"].(float64) != 3 || sessions["failed"].(float64) != 1 ||
		stats["sessions_24h"].(float64) != 2 || !near(stats["cost_30d"].(float64), 5.25) || stats["tasks_total"].(float64) != 1 {
		t.Fatalf("stats: %v", stats)
	}
	funnel := c.must(200, "GET", "/api/dashboard/agent-funnel?days=7", nil).JSON()
	if funnel["created"].(float64) != 2 || funnel["started"].(float64) != 2 || funnel["completed"].(float64) != 2 || funnel["completion_rate"].(float64) != 1 {
		t.Fatalf("funnel: %v", funnel)
	}
	res := c.must(200, "GET", "/api/dashboard/resources", nil).JSON()
	if res["sessions"].(float64) != 4 || res["tasks"].(float64) != 1 || res["project_id"] != pid {
		t.Fatalf("resources: %v", res)
	}
	c.Project = ""
	sum30 := c.must(200, "GET", "/api/dashboard/org-summary", nil).JSON()
	if sum30["sessions"].(map[string]any)["total"].(float64) != 4 || !near(sum30["cost_30d"].(float64), 5.25) || sum30["sessions_30d"].(float64) != 3 {
		t.Fatalf("org summary: %v", sum30)
	}
	orgRes := c.must(200, "GET", "/api/dashboard/org-resources", nil).JSON()
	if orgRes["sessions"].(float64) != 4 || orgRes["members"].(float64) != 1 || orgRes["projects"].(float64) < 1 {
		t.Fatalf("org resources: %v", orgRes)
	}
}
