package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/store"
)

// key presses one key (with modifiers) where the focus is.
func key(t *testing.T, ctx context.Context, k string, mods ...chromedp.Modifier) {
	t.Helper()
	var opts []chromedp.KeyOption
	if len(mods) > 0 {
		opts = append(opts, chromedp.KeyModifiers(mods...))
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(k, opts...)); err != nil {
		t.Fatalf("key %q: %v", k, err)
	}
}

// The approvals page from the keyboard: j and k move between the pending
// approvals, a approves the selected one and moves on, d denies.
func TestConsoleApproveFromTheKeyboard(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("op@example.com")
	withProject(t, env, c)
	var ids []string
	for _, name := range []string{"first", "second"} {
		ids = append(ids, pendingApproval(t, env, c, name))
	}
	ctx, cancel := problemBrowser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav a')`)
	waitSettled(t, ctx)
	forgetRequests(t, ctx) // the signed-out start's 401s
	clickNav(t, ctx, "/approvals")
	waitJS(t, ctx, "two pending, the first selected", `document.querySelectorAll('#approvals-list article.approval').length === 2
		&& document.querySelectorAll('#approvals-list article.approval')[0].classList.contains('selected')`)
	sel := func(i int) string {
		return `document.querySelectorAll('#approvals-list article.approval')[` + string(rune('0'+i)) + `].classList.contains('selected')`
	}
	key(t, ctx, "j")
	waitJS(t, ctx, "j selects the second", sel(1))
	key(t, ctx, "k")
	waitJS(t, ctx, "k selects the first", sel(0))
	first, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#approvals-list article.approval.selected').dataset.approvalId`))
	key(t, ctx, "a")
	waitJS(t, ctx, "approved, the next selected", `document.querySelector('#approvals-list article.approval[data-approval-id="`+first+`"] .approval-status').textContent.includes('approved') && `+sel(1))
	key(t, ctx, "d")
	waitJS(t, ctx, "denied", `document.querySelectorAll('#approvals-list .approval-status')[1].textContent.includes('denied')`)
	checkClean(t, ctx, "approvals after the keyboard")
	got := map[string]string{}
	for _, id := range ids {
		got[id] = c.must(200, "GET", "/api/approvals/"+id, nil).JSON()["status"].(string)
	}
	second := ids[0]
	if second == first {
		second = ids[1]
	}
	if got[first] != "approved" || got[second] != "denied" {
		t.Fatalf("after a then d: %v, want %s approved and %s denied", got, first, second)
	}
}

// Ctrl-K searches incidents, sessions, tasks, runbooks and pages; Enter
// opens the selected result, arrows move, Escape closes.
func TestConsoleGlobalSearch(t *testing.T) {
	env := newEnv(t, openSignup)
	c := env.register("op@example.com")
	withProject(t, env, c)
	task := c.must(201, "POST", "/api/tasks", map[string]any{"name": "nightly disk check", "prompt": "look"}).JSON()["id"].(string)
	incident := bravoWebhook(t, env, c, task).incident
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk-full.md", "content": "# Disk full\nclean /var/log on the disk"})
	u, _ := env.DB.FindUserByEmail(context.Background(), c.Email)
	s := &store.AgentSession{OrgID: u.CurrentOrgID, ProjectID: c.Project, Source: "webchat", Status: "completed", Title: "disk cleanup on db-1"}
	if err := env.DB.Write(context.Background(), func(tx *store.Tx) error { return store.CreateAgentSessionTx(context.Background(), tx, s) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := problemBrowser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav a')`)
	waitSettled(t, ctx)
	forgetRequests(t, ctx) // the signed-out start's 401s

	open := func(q string) {
		t.Helper()
		key(t, ctx, "k", chromedp.ModifierCtrl)
		waitJS(t, ctx, "the search box", `document.activeElement?.id === 'search-input'`)
		if err := chromedp.Do(ctx, chromedp.KeyEvent(q)); err != nil {
			t.Fatal(err)
		}
	}
	open("disk")
	waitJS(t, ctx, "a task, a session and a runbook", `(() => { const t = document.querySelector('#search-results')?.innerText || '';
		return t.includes('nightly disk check') && t.includes('disk cleanup on db-1') && t.includes('Runbook'); })()`)
	checkA11y(t, ctx, "search")
	key(t, ctx, "\x1b") // Escape
	waitJS(t, ctx, "closed", `!document.querySelector('#search')`)

	open("HighLat")
	waitJS(t, ctx, "the incident", textHas(`#search-results`, "HighLatency"))
	key(t, ctx, "\r")
	waitJS(t, ctx, "the incident page", `location.pathname === '/incidents/`+incident+`' && !document.querySelector('#search')`)

	open("audit")
	waitJS(t, ctx, "the audit page", textHas(`#search-results`, "Audit log"))
	key(t, ctx, "\r")
	waitJS(t, ctx, "on the audit log", `location.pathname === '/audit'`)
	checkClean(t, ctx, "search")
}

// pendingApproval gives a new task (named name) a webhook whose one rule
// asks a person first, delivers an alert of its own fingerprint and returns
// the approval it opened.
func pendingApproval(t *testing.T, env *testEnv, c *client, name string) string {
	t.Helper()
	task := c.must(201, "POST", "/api/tasks", map[string]any{"name": name, "prompt": "look"}).JSON()["id"].(string)
	secret := c.must(200, "PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager"}).JSON()["secret"].(string)
	c.must(201, "POST", "/api/tasks/"+task+"/webhook/rules", map[string]any{"name": "ask first", "requires_approval": true})
	f := &hookFixture{env: env, owner: c, task: task, secret: secret}
	r := f.post(t, amAlert(name+"-group", name+"-fp", "firing"), bearer(secret))
	if r.Status != 202 {
		t.Fatalf("delivery: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	for _, d := range f.event(t, r.JSON()["event_id"].(string))["dispatch"].([]any) {
		if it := d.(map[string]any); it["kind"] == "approval" {
			return it["id"].(string)
		}
	}
	t.Fatalf("the delivery for %s opened no approval", name)
	return ""
}
