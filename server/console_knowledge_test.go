package server_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Knowledge and incidents in the browser: a runbook is uploaded, found by
// search, edited and deleted; a memory is forgotten. An Alertmanager alert
// opens an incident whose page shows the alert, takes a note, is
// acknowledged and resolved with a summary.
func TestConsoleKnowledgeAndIncident(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("Looked into it.")))
	env := newEnv(t, withLLM(fake))
	c := env.register("sre@example.com")
	f := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	c.must(201, "POST", "/api/memories", map[string]any{"key": "db-host", "text": "the primary database is db1", "scope": "project"})
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }
	const W, H = 1400, 900
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(W, H)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "sre@example.com")
	js(t, ctx, `window.confirm = () => true`)

	clickNav(t, ctx, "/knowledge")
	waitJS(t, ctx, "an empty knowledge base", textHas(`#knowledge-page`, "No documents yet"))
	err := chromedp.Do(ctx,
		click(`#knowledge-page details summary`),
		chromedp.SendKeys(q(`#document-upload input[name=name]`), "latency.md"),
		chromedp.SendKeys(q(`#document-upload textarea[name=content]`), "# High latency\n\nRestart the frobnicator on api hosts."),
		click(`#document-upload button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the runbook listed", textHas(`#documents-table`, "latency.md"))
	visit(t, ctx, "knowledge-documents", W, H)
	if err := chromedp.Do(ctx, click(`#tab-search`), chromedp.SendKeys(q(`#tabpanel input[name=q]`), "frobnicator"), click(`#tabpanel button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the search hit", textHas(`#search-results`, "High latency"))
	visit(t, ctx, "knowledge-search", W, H)
	if err := chromedp.Do(ctx, click(`#tab-documents`), chromedp.WaitVisible(q(`#documents-table button.secondary`)), click(`#documents-table button.secondary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the editor", `document.querySelector('#document-edit textarea')?.value.includes('frobnicator')`)
	js(t, ctx, `document.querySelector('#document-edit textarea').value = '# High latency\n\nScale the api deployment.'`)
	if err := chromedp.Do(ctx, click(`#document-edit button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the editor closes", `!document.querySelector('#document-editor')`)
	doc := c.must(200, "GET", "/api/knowledge/documents/by-name?collection=runbooks&name=latency.md", nil).JSON()
	if !strings.Contains(doc["content"].(string), "Scale the api deployment.") {
		t.Fatalf("runbook after the edit: %v", doc["content"])
	}
	if err := chromedp.Do(ctx, click(`#documents-table button.secondary`), chromedp.WaitVisible(q(`#document-edit button.danger`)), click(`#document-edit button.danger`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the runbook deleted", textHas(`#knowledge-page`, "No documents yet"))
	if err := chromedp.Do(ctx, click(`#tab-memories`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the memory", textHas(`#memories-list`, "db1"))
	visit(t, ctx, "knowledge-memories", W, H)
	if err := chromedp.Do(ctx, click(`#memories-list button.danger`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the memory forgotten", textHas(`#tabpanel`, "No memories yet"))

	// An alert opens an incident.
	if r := f.post(t, amAlert("g1", "fp1", "firing"), bearer(f.secret)); r.Status != 202 {
		t.Fatalf("delivery: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	clickNav(t, ctx, "/incidents")
	waitJS(t, ctx, "the incident", `!!document.querySelector('#incidents-list .incident h2 a')`)
	if err := chromedp.Do(ctx, click(`#incidents-list .incident h2 a`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the incident's timeline", textHas(`#incident-timeline`, "alert"))
	visit(t, ctx, "incident", W, H)
	err = chromedp.Do(ctx,
		chromedp.SendKeys(q(`#incident-note textarea`), "paged the api team"),
		click(`#incident-note button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the note", textHas(`#incident-timeline`, "paged the api team"))
	if err := chromedp.Do(ctx, click(`#incident-ack`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "acknowledged", textHas(`#incident-page .heading`, "acknowledged"))
	err = chromedp.Do(ctx,
		chromedp.SendKeys(q(`#incident-resolve textarea`), "scaled the api deployment"),
		click(`#incident-resolve button[type=submit]`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "resolved", textHas(`#incident-page .heading`, "resolved"))
	waitJS(t, ctx, "the summary", textHas(`#incident-page`, "scaled the api deployment"))
}
