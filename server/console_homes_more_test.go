package server_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The operations that got a home in session 12 (issue 38 item 4), driven in
// the browser and checked through the API: the dashboard's resource table,
// the Tasks page's stats, a task's next-run preview and its chat channel, a
// routing rule's chat channel, the knowledge index's health and memory
// editing, and the project's agent settings and feature flags.
func TestConsoleNewHomesForTasksKnowledgeAndSettings(t *testing.T) {
	env, base := consoleEnv(t)
	c := env.register("op@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	rule := c.must(201, "POST", "/api/tasks/"+f.task+"/webhook/rules", map[string]any{"name": "page a human", "requires_approval": true}).JSON()["id"].(string)
	ch := c.must(201, "POST", "/api/channels", map[string]any{"platform": "slack", "name": "ops-slack", "allow_unlinked": true,
		"credentials": map[string]any{"bot_token": "xoxb-test", "signing_secret": slackSecret}}).JSON()["id"].(string)
	mem := c.must(201, "POST", "/api/memories", map[string]any{"key": "db-host", "text": "the primary database is db1", "scope": "project"}).JSON()["id"].(string)
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk-full.md", "content": "# Disk full\nclean /var/log"})

	ctx, cancel := problemBrowser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	const W, H = 1400, 900
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(W, H)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, base, "op@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav .nav-group a')`)
	forgetRequests(t, ctx) // the first "who am I" answers 401 before the sign-in
	js(t, ctx, `window.confirm = () => true`)

	// Dashboard: what the project and the organization hold.
	held := c.must(200, "GET", "/api/dashboard/resources", nil).JSON()
	orgHeld := c.must(200, "GET", "/api/dashboard/org-resources", nil).JSON()
	clickNav(t, ctx, "/dashboard")
	waitJS(t, ctx, "the resource table", `!!document.querySelector('#resources-table tbody tr')`)
	cells := func(sel string) []string {
		got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll(`+jsString(sel)+`)].map(td => td.textContent.trim())`))
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	row := cells(`#resources-table tr:nth-child(4) td`) // Tasks
	if want := []string{fmt.Sprint(held["tasks"]), fmt.Sprint(orgHeld["tasks"])}; strings.Join(row, ",") != strings.Join(want, ",") {
		t.Errorf("tasks held: the table says %v, the API %v", row, want)
	}
	if row := cells(`#resources-table tr:nth-child(7) td`); len(row) != 2 || row[0] != fmt.Sprint(held["memories"]) {
		t.Errorf("memories held: the table says %v, the API %v", row, held["memories"])
	}
	checkClean(t, ctx, "dashboard")

	// Tasks: the stats, the next run, the task's chat.
	stats := c.must(200, "GET", "/api/tasks/stats?days=7", nil).JSON()
	clickNav(t, ctx, "/tasks")
	waitJS(t, ctx, "the task stats", textHas(`#task-stats`, fmt.Sprintf("%v of %v", stats["enabled"], stats["total"])))
	if err := chromedp.Do(ctx, click(`#tasks-table tr[data-task-id="`+f.task+`"] button.open`), chromedp.WaitVisible(q(`#task-next-run`)), click(`#task-next-run summary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the prompt of the next run", textHas(`#task-next-run .task-prompt`, "investigate the alert"))
	if err := chromedp.Do(ctx, click(`#task-channel summary`), chromedp.WaitVisible(q(`#task-channel input[name=conversation]`)),
		chromedp.SendKeys(q(`#task-channel input[name=conversation]`), "C0OPS"), click(`#task-channel button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the task posts to Slack", textHas(`#task-channel .chat-target-now`, "ops-slack"))
	if got := c.must(200, "GET", "/api/tasks/"+f.task+"/channel", nil).JSON(); got["channel_id"] != ch || got["conversation"] != "C0OPS" {
		t.Fatalf("the task's channel after the form: %v", got)
	}
	visit(t, ctx, "task-next-run-and-channel", W, H)
	if err := chromedp.Do(ctx, click(`#task-channel .chat-target-stop`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the task posts nowhere", textHas(`#task-channel .chat-target-now`, "nowhere"))
	c.must(404, "GET", "/api/tasks/"+f.task+"/channel", nil)
	checkClean(t, ctx, "tasks", "/channel") // an unset channel is a 404 the control expects

	// The webhook page: a routing rule's chat.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/webhooks/"+f.task)); err != nil {
		t.Fatal(err)
	}
	rc := `#rule-channel-` + rule
	if err := chromedp.Do(ctx, click(rc+` summary`), chromedp.WaitVisible(q(rc+` input[name=conversation]`)),
		chromedp.SendKeys(q(rc+` input[name=conversation]`), "C0PAGE"), click(rc+` button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rule posts to Slack", textHas(rc+` .chat-target-now`, "C0PAGE"))
	rulePath := "/api/tasks/" + f.task + "/webhook/rules/" + rule + "/channel"
	if got := c.must(200, "GET", rulePath, nil).JSON(); got["conversation"] != "C0PAGE" {
		t.Fatalf("the rule's channel after the form: %v", got)
	}
	if err := chromedp.Do(ctx, click(rc+` .chat-target-stop`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rule posts nowhere", textHas(rc+` .chat-target-now`, "nowhere"))
	c.must(404, "GET", rulePath, nil)

	// Knowledge: a memory corrected in place; the index's health.
	clickNav(t, ctx, "/knowledge")
	if err := chromedp.Do(ctx, click(`#tab-memories`), click(`#memories-list li[data-memory-id="`+mem+`"] button.memory-edit`), chromedp.WaitVisible(q(`#memory-edit textarea`))); err != nil {
		t.Fatal(err)
	}
	js(t, ctx, `document.querySelector('#memory-edit textarea').value = 'the primary database is db2 since the failover'`)
	if err := chromedp.Do(ctx, chromedp.SendKeys(q(`#memory-edit input[name=tags]`), "database, failover"), click(`#memory-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the corrected memory", textHas(`#memories-list`, "db2 since the failover"))
	if got := c.must(200, "GET", "/api/memories/"+mem, nil).JSON(); got["text"] != "the primary database is db2 since the failover" || fmt.Sprint(got["tags"]) != "[database failover]" {
		t.Fatalf("the memory after the edit: %v", got)
	}
	rag := c.must(200, "GET", "/api/observability/rag?hours=24", nil).JSON()["index"].(map[string]any)
	if err := chromedp.Do(ctx, click(`#tab-health`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the index health", textHas(`#rag-health`, fmt.Sprintf("%v", rag["chunks"]))+` && `+textHas(`#rag-health`, "indexed chunks"))
	visit(t, ctx, "knowledge-health", W, H)

	// Project settings: the agent's instructions and budget; the features.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/settings?tab=agent"), chromedp.WaitVisible(q(`#agent-settings-form textarea`)),
		chromedp.SendKeys(q(`#agent-settings-form textarea`), "Databases are db1 and db2."),
		chromedp.SendKeys(q(`#agent-settings-form input[name=evidence_budget_tokens]`), "12000"), click(`#agent-settings-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "saved", textHas(`#agent-settings-status`, "Saved."))
	if got := c.must(200, "GET", "/api/agent-settings", nil).JSON(); got["instructions"] != "Databases are db1 and db2." || got["evidence_budget_tokens"] != 12000.0 {
		t.Fatalf("agent settings after the form: %v", got)
	}
	visit(t, ctx, "settings-agent", W, H)
	flags := c.must(200, "GET", "/api/projects/"+c.Project+"/feature-flags", nil).JSON()["flags"].(map[string]any)
	if err := chromedp.Do(ctx, click(`#tab-features`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the feature flags", `document.querySelectorAll('#feature-flags tbody tr').length === `+fmt.Sprint(len(flags)))
	for k, on := range flags {
		want := map[bool]string{true: "enabled", false: "disabled"}[on.(bool)]
		waitJS(t, ctx, "flag "+k, textHas(`#feature-flags tr[data-flag="`+k+`"]`, want))
	}
	visit(t, ctx, "settings-features", W, H)
	checkClean(t, ctx, "settings")
}

// Someone who skipped the wizard and makes a first project on the Projects
// page has finished onboarding: the status says completed.
func TestConsoleFirstProjectCompletesOnboarding(t *testing.T) {
	env := newEnv(t)
	c := env.register("new@example.com")
	c.must(200, "POST", "/api/onboarding/skip", nil)
	ctx, cancel := browser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "new@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav .nav-group a')`) // before the reload below
	if err := chromedp.Do(ctx, chromedp.Navigate(env.URL+"/projects"), chromedp.WaitVisible(chromedp.CSS(`#project-create`)),
		chromedp.SendKeys(chromedp.CSS(`#project-name`), "prod"), click(`#project-create button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the project listed", textHas(`#projects-table`, "prod"))
	waitSettled(t, ctx)
	if got := c.must(200, "GET", "/api/onboarding/status", nil).JSON()["status"]; got != "completed" {
		t.Fatalf("onboarding after the first project: %v, want completed", got)
	}
}
