package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// Heartbeats, maintenance windows, rules what-if and postmortems in the
// browser: a check is created (its ping URL shown once) and pinged; a
// window is created and shown active; a rule is previewed against recorded
// calls and started in shadow mode; a resolved incident's draft is opened
// and published.
func TestConsoleBeyondPages(t *testing.T) {
	env := newEnv(t)
	c := env.register("sre@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	const W, H = 1400, 900
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(W, H)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "sre@example.com")
	js(t, ctx, `window.confirm = () => true`)

	clickNav(t, ctx, "/heartbeats")
	waitJS(t, ctx, "no checks yet", textHas(`#heartbeats-page`, "No heartbeat checks yet"))
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#heartbeat-create input[name=name]`), "nightly backup"),
		click(`#heartbeat-create button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the ping URL", `document.querySelector('#heartbeat-ping-url')?.value.includes('/api/ping/ohb_')`)
	pingURL, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('#heartbeat-ping-url').value`))
	if err != nil {
		t.Fatal(err)
	}
	env.newClient().must(200, "POST", pingURL[strings.Index(pingURL, "/api/ping/"):], nil)
	visit(t, ctx, "heartbeats", W, H)
	if err := chromedp.Do(ctx, click(`#heartbeat-made button.secondary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the check listed", textHas(`#heartbeats-table`, "nightly backup"))
	if err := chromedp.Do(ctx, click(`#heartbeats-table button.pings-show`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the ping listed", textHas(`#heartbeat-pings`, "success"))

	clickNav(t, ctx, "/maintenance")
	waitJS(t, ctx, "no windows yet", textHas(`#windows-page`, "No maintenance windows"))
	js(t, ctx, `document.querySelector('#windows-page details').open = true`)
	js(t, ctx, `(() => { const f = document.querySelector('#window-create'); const d = (m) => { const x = new Date(Date.now() + m * 60000); return new Date(x - x.getTimezoneOffset() * 60000).toISOString().slice(0, 16); };
		f.starts_at.value = d(-5); f.ends_at.value = d(60); })()`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#window-create input[name=name]`), "db upgrade"),
		chromedp.SendKeys(q(`#window-create input[name=labels]`), "service=billing"),
		click(`#window-create button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the active window", textHas(`#windows-table`, "active"))
	visit(t, ctx, "maintenance-windows", W, H)
	if err := chromedp.Do(ctx, click(`#windows-table button.window-end`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the window ended", textHas(`#windows-table`, "inactive"))

	clickNav(t, ctx, "/rules-what-if")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#whatif-form input[name=description]`), "never restart"),
		chromedp.SendKeys(q(`#whatif-form input[name=tool]`), "run_command"),
		chromedp.SendKeys(q(`#whatif-form input[name=pattern]`), "*restart*"),
		click(`#whatif-form button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the preview", textHas(`#whatif-result`, "calls replayed"))
	js(t, ctx, `document.querySelector('#shadow-create').closest('details').open = true`)
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(q(`#shadow-create input[name=description]`), "never restart"),
		chromedp.SendKeys(q(`#shadow-create input[name=tool]`), "run_command"),
		chromedp.SendKeys(q(`#shadow-create input[name=pattern]`), "*restart*"),
		click(`#shadow-create button[type=submit]`),
	); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the shadow rule", textHas(`#shadow-table`, "never restart"))
	visit(t, ctx, "rules-what-if", W, H)
	// A call the shadow rule would have blocked, recorded at the gate, shows on the page.
	c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "effect": "allow", "description": "restarts are fine", "tool": "run_command",
		"match_type": "glob", "pattern": "systemctl restart *"})
	env.Srv.RecordShadowForTest(orgOf(t, c), c.Project, "run_command", `{"command":"systemctl restart api","target":"server"}`)
	if err := chromedp.Do(ctx, chromedp.Reload()); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the recorded count", `document.querySelector('#shadow-table button.shadow-show') !== null`)
	if err := chromedp.Do(ctx, click(`#shadow-table button.shadow-show`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the recorded call", textHas(`#shadow-recorded`, "systemctl restart api"))

	// A resolved incident gets a draft (no model here: drafted from the facts).
	f.post(t, amAlert("g", "fp", "firing"), bearer(f.secret))
	f.dispatch(t)
	inc := incidentsOf(t, c)[0]["id"].(string)
	c.must(200, "POST", "/api/incidents/"+inc+"/resolve", map[string]any{"summary": "scaled up"})
	// The draft is written in the background after the resolve: a 404 until then.
	pollUntil(t, "the draft", func() map[string]any { return c.do("GET", "/api/postmortems/"+inc, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" })
	clickNav(t, ctx, "/postmortems")
	waitJS(t, ctx, "the draft listed", textHas(`#postmortems-list`, "postmortem-"+inc))
	if err := chromedp.Do(ctx, click(`#postmortems-list button.link`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the draft text", `document.querySelector('#postmortem-text')?.value.includes('[incident:`+inc+`]')`)
	visit(t, ctx, "postmortems", W, H)
	if err := chromedp.Do(ctx, click(`#postmortem-publish`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "published", textHas(`#postmortem-draft`, "published"))
	if got := c.must(200, "GET", "/api/postmortems/"+inc, nil).JSON(); got["status"] != "published" {
		t.Fatalf("after publish: %v", got)
	}
}
