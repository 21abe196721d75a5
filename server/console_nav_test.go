package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// navGroups is issue 38's navigation by job: the sidebar's groups and
// their pages, in order.
var navGroups = []struct {
	label string
	pages []string
}{
	{"Respond", []string{"Incidents", "Approvals", "Chat", "Sessions"}},
	{"Automate", []string{"Tasks", "Webhooks", "Heartbeats", "Maintenance", "Rules and what-if"}},
	{"Know", []string{"Knowledge", "Postmortems", "Changes"}},
	{"Connect", []string{"Connectors", "Channels", "Integrations"}},
	{"Admin", []string{"Projects", "Project settings", "Organization", "Members", "API keys", "Audit log", "Billing", "Usage", "Evaluations"}},
}

// The grouped sidebar: the groups and pages of the issue, counts on
// Approvals and Incidents, every link reaches its page with breadcrumbs
// naming group and page, a collapsed group stays collapsed for the person
// after a reload, and on a phone the sidebar is a menu that closes once a
// page is chosen.
func TestConsoleNavigationByJob(t *testing.T) {
	env := newEnv(t)
	c := env.register("op@example.com")
	withProject(t, env, c)
	task := c.must(201, "POST", "/api/tasks", map[string]any{"name": "on alert", "prompt": "look"}).JSON()["id"].(string)
	bravoWebhook(t, env, c, task) // one pending approval, one open incident
	ctx, cancel := problemBrowser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "op@example.com")
	waitJS(t, ctx, "the counts", `document.querySelector('#count-approvals')?.hidden === false && document.querySelector('#count-approvals').textContent.startsWith('1')
		&& document.querySelector('#count-incidents')?.hidden === false && document.querySelector('#count-incidents').textContent.startsWith('1')`)

	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#nav .nav-group')].map(g =>
		g.querySelector('.nav-group-toggle').textContent + ': ' + [...g.querySelectorAll('a .nav-label')].map(a => a.textContent).join(', '))`))
	if err != nil {
		t.Fatal(err)
	}
	// The pages lead each group, in order; pages added later (the
	// evaluations) follow them.
	var want []string
	ok := len(got) == len(navGroups)
	for i, g := range navGroups {
		w := g.label + ": " + strings.Join(g.pages, ", ")
		want = append(want, w+"[, ...]")
		if ok && got[i] != w && !strings.HasPrefix(got[i], w+", ") {
			ok = false
		}
	}
	if !ok {
		t.Fatalf("sidebar groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Every link: its page, marked current, with group › page breadcrumbs.
	hrefs, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#nav .nav-group a')].map(a => a.getAttribute('href'))`))
	if err != nil {
		t.Fatal(err)
	}
	for _, href := range hrefs {
		clickNav(t, ctx, href)
		waitJS(t, ctx, "the page of "+href, `location.pathname === `+jsString(href)+` && document.querySelector('#nav a[aria-current=page]')?.getAttribute('href') === `+jsString(href)+`
			&& document.querySelectorAll('#crumbs li').length === 2 && !!document.querySelector('#view h1')`)
		crumb, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#crumbs').innerText.replace(/\s+/g, ' ')`))
		label, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#nav a[aria-current=page] .nav-label').textContent`))
		group, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#nav a[aria-current=page]').closest('.nav-group').querySelector('.nav-group-toggle').textContent`))
		if !strings.Contains(crumb, group) || !strings.Contains(crumb, label) {
			t.Errorf("breadcrumbs on %s read %q, want %s › %s", href, crumb, group, label)
		}
	}
	// A detail page adds the item to the breadcrumbs.
	clickNav(t, ctx, "/incidents")
	if err := chromedp.Do(ctx, click(`#incidents-list a[href^="/incidents/"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "incident breadcrumbs", `document.querySelectorAll('#crumbs li').length === 3 && !!document.querySelector('#crumbs a[href="/incidents"]')`)

	// Collapse "Know": remembered for the person, across a reload.
	if err := chromedp.Do(ctx, click(`#nav .nav-group[data-group=know] .nav-group-toggle`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "Know collapsed", `document.querySelector('#nav-group-know').hidden && document.querySelector('#nav .nav-group[data-group=know] .nav-group-toggle').getAttribute('aria-expanded') === 'false'`)
	waitSettled(t, ctx)
	pref := c.must(200, "GET", "/api/me/preferences/console.nav", nil).JSON()
	if v, _ := pref["value"].(map[string]any); v == nil || !strings.Contains(strings.Join(anyStrings(v["collapsed"]), ","), "know") {
		t.Fatalf("remembered nav %v, want know collapsed", pref)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(env.URL+"/dashboard")); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "still collapsed after a reload", `!!document.querySelector('#nav-group-know') && document.querySelector('#nav-group-know').hidden && !document.querySelector('#nav-group-respond').hidden`)
	visit(t, ctx, "sidebar", 1400, 900)

	// Phone: a menu; choosing a page closes it.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(390, 844)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the sidebar folded away", `getComputedStyle(document.querySelector('#nav')).display === 'none' && getComputedStyle(document.querySelector('#nav-toggle')).display !== 'none'`)
	if err := chromedp.Do(ctx, click(`#nav-toggle`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the menu open", `getComputedStyle(document.querySelector('#nav')).display !== 'none'`)
	checkA11y(t, ctx, "phone menu")
	if err := chromedp.Do(ctx, click(`#nav a[href="/approvals"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "approvals, menu closed", `location.pathname === '/approvals' && getComputedStyle(document.querySelector('#nav')).display === 'none'`)
}

func anyStrings(v any) []string {
	var out []string
	l, _ := v.([]any)
	for _, x := range l {
		s, _ := x.(string)
		out = append(out, s)
	}
	return out
}
