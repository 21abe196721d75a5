package server_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// withProject gives the client a project in its current org (created through
// the store: the projects routes have tests of their own) and sets X-Project-ID.
func withProject(t *testing.T, env *testEnv, c *client) string {
	t.Helper()
	u, err := env.DB.FindUserByEmail(context.Background(), c.Email)
	if err != nil {
		t.Fatal(err)
	}
	p := &store.Project{OrgID: u.CurrentOrgID, Name: "prod"}
	if err := env.DB.CreateProject(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	c.Project = p.ID
	return p.ID
}

func createTask(t *testing.T, c *client, body map[string]any) map[string]any {
	t.Helper()
	return c.must(201, "POST", "/api/tasks", body).JSON()
}

func TestTaskCRUD(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("ana@example.com")
	withProject(t, env, c)
	task := createTask(t, c, map[string]any{"name": "Nightly health", "prompt": "Check the fleet", "schedule": "0 2 * * *",
		"timezone": "Europe/Paris", "agent_type": "sre"})
	id := task["id"].(string)
	if task["enabled"] != true || task["missed_fire_policy"] != "run_once" || task["overlap_policy"] != "skip" ||
		task["timeout_seconds"].(float64) != 900 || task["next_run_at"] == nil || task["created_by"] == nil {
		t.Fatalf("defaults: %v", task)
	}
	next, _ := time.Parse(time.RFC3339, task["next_run_at"].(string))
	if loc, _ := time.LoadLocation("Europe/Paris"); next.In(loc).Hour() != 2 {
		t.Fatalf("next_run_at %v is not 02:00 in Paris", next)
	}
	got := c.must(200, "GET", "/api/tasks/"+id, nil).JSON()
	if got["prompt"] != "Check the fleet" {
		t.Fatalf("get: %v", got)
	}
	up := c.must(200, "PATCH", "/api/tasks/"+id, map[string]any{"enabled": false, "name": "Renamed"}).JSON()
	if up["enabled"] != false || up["next_run_at"] != nil || up["name"] != "Renamed" {
		t.Fatalf("patch: %v", up)
	}
	up = c.must(200, "PATCH", "/api/tasks/"+id, map[string]any{"enabled": true, "schedule": ""}).JSON()
	if up["next_run_at"] != nil || up["schedule"] != "" {
		t.Fatalf("unscheduled: %v", up)
	}
	clone := c.must(201, "POST", "/api/tasks/"+id+"/clone", nil).JSON()
	if clone["id"] == id || clone["name"] != "Renamed (copy)" || clone["enabled"] != false || clone["prompt"] != "Check the fleet" {
		t.Fatalf("clone: %v", clone)
	}
	c.must(204, "DELETE", "/api/tasks/"+id, nil)
	c.must(404, "GET", "/api/tasks/"+id, nil)
	c.must(404, "DELETE", "/api/tasks/"+id, nil)
	c.must(404, "GET", "/api/tasks/not-a-uuid", nil)
	c.must(404, "PATCH", "/api/tasks/"+store.NewID(), map[string]any{"name": "x"})
}

func TestTaskFromTemplate(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("tpl@example.com")
	withProject(t, env, c)
	var tpls []map[string]any
	c.must(200, "GET", "/api/task-templates", nil).decode(t, &tpls)
	ids := map[string]bool{}
	for _, tp := range tpls {
		ids[tp["id"].(string)] = true
		if tp["prompt"] == "" || tp["schedule"] == "" || tp["agent_type"] == "" {
			t.Fatalf("incomplete template %v", tp)
		}
		// every template must make a valid task as it stands
		createTask(t, c, map[string]any{"template_id": tp["id"]})
	}
	for _, want := range []string{"disk-pressure", "memory-pressure", "tls-expiry", "failed-systemd-units", "backup-freshness", "k8s-pods-not-ready", "error-rate-spike", "weekly-cost-summary"} {
		if !ids[want] {
			t.Errorf("catalogue lacks %s", want)
		}
	}
	task := createTask(t, c, map[string]any{"template_id": "tls-expiry", "schedule": "0 6 * * *"})
	if task["name"] != "TLS certificate expiry" || task["agent_type"] != "security" || task["schedule"] != "0 6 * * *" || task["template_id"] != "tls-expiry" {
		t.Fatalf("from template: %v", task)
	}
	wantValidation(t, c.do("POST", "/api/tasks", map[string]any{"template_id": "nope"}), "body", "template_id")
}

func TestTaskValidation(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("val@example.com")
	withProject(t, env, c)
	ok := map[string]any{"name": "n", "prompt": "p"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for a, b := range ok {
			m[a] = b
		}
		m[k] = v
		return m
	}
	wantValidation(t, c.do("POST", "/api/tasks", with("schedule", "61 * * * *")), "body", "schedule")
	wantValidation(t, c.do("POST", "/api/tasks", with("schedule", "@every 5s")), "body", "schedule")
	wantValidation(t, c.do("POST", "/api/tasks", with("timezone", "Mars/Base")), "body", "timezone")
	wantValidation(t, c.do("POST", "/api/tasks", with("agent_type", "wizard")), "body", "agent_type")
	wantValidation(t, c.do("POST", "/api/tasks", with("missed_fire_policy", "maybe")), "body", "missed_fire_policy")
	wantValidation(t, c.do("POST", "/api/tasks", with("overlap_policy", "always")), "body", "overlap_policy")
	wantValidation(t, c.do("POST", "/api/tasks", with("timeout_seconds", 5)), "body", "timeout_seconds")
	wantValidation(t, c.do("POST", "/api/tasks", with("enabled", nil)), "body", "enabled")
	wantValidation(t, c.do("POST", "/api/tasks", map[string]any{"prompt": "p"}), "body", "name")
	wantValidation(t, c.do("POST", "/api/tasks", map[string]any{"name": "n"}), "body", "prompt")
	id := createTask(t, c, ok)["id"].(string)
	wantValidation(t, c.do("PATCH", "/api/tasks/"+id, map[string]any{"schedule": "bad"}), "body", "schedule")
	wantValidation(t, c.do("PATCH", "/api/tasks/"+id, map[string]any{"timezone": "Nowhere"}), "body", "timezone")
	wantValidation(t, c.do("PATCH", "/api/tasks/"+id, map[string]any{"agent_type": "x"}), "body", "agent_type")
	for q, loc := range map[string]string{"limit=201": "limit", "limit=0": "limit", "offset=-1": "offset", "sort=random": "sort",
		"agent_type=wizard": "agent_type", "enabled=perhaps": "enabled", "created_after=yesterday": "created_after",
		"created_before=2026-13-45": "created_before"} {
		wantValidation(t, c.do("GET", "/api/tasks?"+q, nil), "query", loc)
	}
	wantValidation(t, c.do("GET", "/api/tasks/stats?days=0", nil), "query", "days")
	c.Project = ""
	wantValidation(t, c.do("GET", "/api/tasks", nil), "header", "x-project-id")
}

func TestTaskListFilters(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("list@example.com")
	withProject(t, env, c)
	mk := func(name, agent string, enabled bool, schedule string) string {
		id := createTask(t, c, map[string]any{"name": name, "prompt": "prompt of " + name, "agent_type": agent, "enabled": enabled, "schedule": schedule})["id"].(string)
		env.Advance(time.Minute)
		return id
	}
	start := env.Srv.Now()
	a := mk("Alpha disk", "sre", true, "0 0 29 2 *")
	b := mk("bravo certs", "security", false, "")
	cc := mk("Charlie cost", "cost", true, "0 9 * * 1")
	d := mk("delta disk", "sre", true, "0 0 1 1 *") // schedules that cannot fire during the test
	list := func(q string) []string {
		var page struct {
			Items []map[string]any `json:"items"`
			Total int              `json:"total"`
		}
		c.must(200, "GET", "/api/tasks?"+q, nil).decode(t, &page)
		var ids []string
		for _, it := range page.Items {
			ids = append(ids, it["id"].(string))
			if _, has := it["prompt"]; has {
				t.Fatal("list items carry the prompt")
			}
		}
		return ids
	}
	eq := func(q string, want ...string) {
		t.Helper()
		if got := list(q); strings.Join(got, ",") != strings.Join(want, ",") {
			t.Fatalf("%s: got %v want %v", q, got, want)
		}
	}
	eq("", d, cc, b, a)
	eq("sort=created_asc", a, b, cc, d)
	eq("sort=name_asc", a, b, cc, d)
	eq("sort=name_desc", d, cc, b, a)
	eq("search=DISK", d, a)
	eq("search=prompt%20of%20bravo", b)
	eq("search=50%25")
	eq("agent_type=sre&sort=created_asc", a, d)
	eq("enabled=false", b)
	eq("enabled=true&sort=created_asc", a, cc, d)
	eq("sort=next_run_asc", cc, d, a, b)
	after := url.QueryEscape(start.Add(90 * time.Second).Format(time.RFC3339))
	before := url.QueryEscape(start.Add(150 * time.Second).Format(time.RFC3339))
	eq("created_after="+after+"&created_before="+before, cc)
	eq("created_before=" + start.Format("2006-01-02"))
	eq("limit=2&offset=1", cc, b)
	var page map[string]any
	c.must(200, "GET", "/api/tasks?limit=2&offset=1", nil).decode(t, &page)
	if page["total"].(float64) != 4 || page["limit"].(float64) != 2 || page["offset"].(float64) != 1 {
		t.Fatalf("page: %v", page)
	}
	c.must(200, "GET", "/api/tasks?limit=200", nil)
	// last_run_desc: only the triggered task has a run, it comes first.
	c.must(202, "POST", "/api/tasks/"+cc+"/trigger", nil)
	waitStatus(t, env, c, cc, "failed")
	if got := list("sort=last_run_desc"); got[0] != cc {
		t.Fatalf("last_run_desc: %v", got)
	}
}

func TestTaskTenancy(t *testing.T) {
	t.Parallel()
	env := newEnv(t, func(c *server.Config) { c.Signup = "open" })
	a := env.register("a@example.com")
	withProject(t, env, a)
	b := env.register("b@example.com")
	withProject(t, env, b)
	mine := createTask(t, a, map[string]any{"name": "mine", "prompt": "p"})["id"].(string)
	theirs := createTask(t, b, map[string]any{"name": "theirs", "prompt": "p"})["id"].(string)
	for _, m := range []string{"GET", "DELETE"} {
		a.must(404, m, "/api/tasks/"+theirs, nil)
	}
	a.must(404, "POST", "/api/tasks/"+theirs+"/trigger", nil)
	a.must(404, "POST", "/api/tasks/"+theirs+"/clone", nil)
	a.must(404, "GET", "/api/tasks/"+theirs+"/preview", nil)
	a.must(404, "PATCH", "/api/tasks/"+theirs, map[string]any{"name": "x"})
	var res struct {
		Deleted  []string `json:"deleted"`
		NotFound []string `json:"not_found"`
		Count    int      `json:"deleted_count"`
	}
	a.must(200, "POST", "/api/tasks/bulk-delete", map[string]any{"ids": []string{mine, theirs, "junk"}}).decode(t, &res)
	if res.Count != 1 || len(res.Deleted) != 1 || res.Deleted[0] != mine || len(res.NotFound) != 2 {
		t.Fatalf("bulk delete: %+v", res)
	}
	b.must(200, "GET", "/api/tasks/"+theirs, nil)
	wantValidation(t, a.do("POST", "/api/tasks/bulk-delete", map[string]any{"ids": []string{}}), "body", "ids")
	// another org's project id is a 404 on the header
	a.Project = b.Project
	a.must(404, "GET", "/api/tasks", nil)
}

// waitStatus polls a task until its latest run reaches status.
func waitStatus(t *testing.T, env *testEnv, c *client, id, status string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		got := c.must(200, "GET", "/api/tasks/"+id, nil).JSON()
		if got["last_status"] == status {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s never reached %s: %v", id, status, got)
		}
		env.Srv.TaskScheduler().Wake()
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTaskTrigger(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("run@example.com")
	withProject(t, env, c)
	id := createTask(t, c, map[string]any{"name": "adhoc", "prompt": "look around"})["id"].(string)
	c.Header.Set("Idempotency-Key", "retry-1")
	first := c.must(202, "POST", "/api/tasks/"+id+"/trigger", nil).JSON()
	second := c.must(202, "POST", "/api/tasks/"+id+"/trigger", nil).JSON()
	if first["session_id"] != second["session_id"] || second["replayed"] != true || first["replayed"] != false {
		t.Fatalf("idempotency: %v %v", first, second)
	}
	c.Header.Del("Idempotency-Key")
	third := c.must(202, "POST", "/api/tasks/"+id+"/trigger", nil).JSON()
	if third["session_id"] == first["session_id"] || third["trigger_source"] != "manual" {
		t.Fatalf("keyless trigger reused a run: %v", third)
	}
	// No LLM is configured: the run fails fast and says what to set.
	got := waitStatus(t, env, c, id, "failed")
	if !strings.Contains(got["last_error"].(string), "OPSAGENT_LLM_PROVIDER") {
		t.Fatalf("last_error: %v", got["last_error"])
	}
	s, err := env.DB.FindAgentSession(context.Background(), got["org_id"].(string), first["session_id"].(string))
	if err != nil || s.Source != "task" || s.TriggerSource != "manual" || s.Status != "failed" {
		t.Fatalf("session: %+v %v", s, err)
	}
	runs, _ := env.DB.FindTaskRuns(context.Background(), s.OrgID, id, 10)
	if len(runs) != 2 {
		t.Fatalf("%d runs, want 2 (one per distinct trigger)", len(runs))
	}
	var st map[string]any
	c.must(200, "GET", "/api/tasks/stats", nil).decode(t, &st)
	if st["failed"].(float64) < 1 || st["success_rate"].(float64) != 0 || st["total"].(float64) != 1 {
		t.Fatalf("stats: %v", st)
	}
	c.must(200, "PATCH", "/api/tasks/"+id, map[string]any{"enabled": false})
	r := c.must(409, "POST", "/api/tasks/"+id+"/trigger", nil)
	if r.JSON()["code"] != "task_disabled" {
		t.Fatalf("disabled trigger: %s", r.Body)
	}
	c.Header.Set("Idempotency-Key", strings.Repeat("k", 201))
	wantValidation(t, c.do("POST", "/api/tasks/"+id+"/trigger", nil), "header", "idempotency-key")
}

func TestTaskScheduledFireOverHTTP(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	env.UseClock()
	c := env.register("sched@example.com")
	withProject(t, env, c)
	task := createTask(t, c, map[string]any{"name": "every5", "prompt": "p", "schedule": "*/5 * * * *"})
	next, _ := time.Parse(time.RFC3339, task["next_run_at"].(string))
	var st map[string]any
	c.must(200, "GET", "/api/tasks/stats", nil).decode(t, &st)
	if st["next_task_id"] != task["id"] || st["scheduled"].(float64) != 1 {
		t.Fatalf("stats before: %v", st)
	}
	env.Advance(next.Sub(env.Srv.Now()) + time.Second)
	if _, err := env.Srv.TaskScheduler().Tick(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := waitStatus(t, env, c, task["id"].(string), "failed")
	if got["next_run_at"] == task["next_run_at"] {
		t.Fatal("next_run_at did not move on")
	}
	// Restart on the same data dir: the fire is not recorded again.
	env2 := env.Restart()
	c.env = env2
	runs, _ := env2.DB.FindTaskRuns(context.Background(), got["org_id"].(string), task["id"].(string), 10)
	if len(runs) != 1 || runs[0].TriggerSource != "scheduled" {
		t.Fatalf("runs after restart: %d", len(runs))
	}
}

func TestTaskPreview(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("prev@example.com")
	withProject(t, env, c)
	var out map[string]any
	c.must(200, "POST", "/api/tasks/preview?count=3", map[string]any{"name": "TLS", "prompt": "check certs", "schedule": "0 9 * * 1-5",
		"timezone": "Asia/Tokyo", "agent_type": "security", "max_cost_usd": 2.5}).decode(t, &out)
	runs := out["next_runs"].([]any)
	if len(runs) != 3 {
		t.Fatalf("next_runs: %v", runs)
	}
	for _, r := range runs {
		local := r.(map[string]any)["local"].(string)
		if !strings.Contains(local, "T09:00:00+09:00") {
			t.Fatalf("local time %s not 09:00 Tokyo", local)
		}
	}
	p := out["prompt"].(string)
	if !strings.Contains(p, "check certs") || !strings.Contains(p, "security engineer") || !strings.Contains(p, "$2.50") || !strings.Contains(p, "JST") {
		t.Fatalf("prompt: %s", p)
	}
	if rules, ok := out["rules"].([]any); !ok || len(rules) != 0 {
		t.Fatalf("rules field: %v", out["rules"])
	}
	if b := out["budget"].(map[string]any); b["max_steps"].(float64) != 30 || b["timeout_seconds"].(float64) != 900 {
		t.Fatalf("budget: %v", b)
	}
	wantValidation(t, c.do("POST", "/api/tasks/preview", map[string]any{"name": "n", "prompt": "p", "schedule": "* * *"}), "body", "schedule")
	wantValidation(t, c.do("POST", "/api/tasks/preview", map[string]any{"name": "n", "prompt": "p", "timezone": "Atlantis"}), "body", "timezone")
	wantValidation(t, c.do("POST", "/api/tasks/preview?count=51", map[string]any{"name": "n", "prompt": "p"}), "query", "count")
	id := createTask(t, c, map[string]any{"name": "saved", "prompt": "saved prompt", "schedule": "@daily"})["id"].(string)
	c.must(200, "GET", "/api/tasks/"+id+"/preview", nil).decode(t, &out)
	if out["task_id"] != id || len(out["next_runs"].([]any)) != 5 || !strings.Contains(out["prompt"].(string), "saved prompt") {
		t.Fatalf("saved preview: %v", out)
	}
}

func TestTaskPermissionsAndOpenAPI(t *testing.T) {
	t.Parallel()
	env := newEnv(t)
	c := env.register("doc@example.com")
	var doc map[string]any
	c.must(200, "GET", "/api/openapi.json", nil).decode(t, &doc)
	paths := doc["paths"].(map[string]any)
	for _, p := range []string{"/api/task-templates", "/api/tasks", "/api/tasks/stats", "/api/tasks/bulk-delete", "/api/tasks/preview",
		"/api/tasks/{task_id}", "/api/tasks/{task_id}/preview", "/api/tasks/{task_id}/clone", "/api/tasks/{task_id}/trigger"} {
		if paths[p] == nil {
			t.Errorf("openapi lacks %s", p)
		}
	}
	anon := env.newClient()
	anon.must(401, "GET", "/api/task-templates", nil)
}
