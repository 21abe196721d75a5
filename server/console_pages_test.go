package server_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// jsString quotes s as a JavaScript string literal (JSON is a subset).
func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// waitJS polls a JavaScript predicate in the page until it holds; on
// timeout the test fails with what the page shows.
func waitJS(t *testing.T, ctx context.Context, what, expr string) {
	t.Helper()
	pctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if ok, err := chromedp.Run(pctx, chromedp.Poll[bool](expr)); err != nil || !ok {
		body, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`document.body.innerText`))
		t.Fatalf("%s: %v (%v)\npage text:\n%s", what, ok, err, body)
	}
}

// textHas is a predicate: the element sel exists and its text contains s.
func textHas(sel, s string) string {
	return `(document.querySelector(` + jsString(sel) + `)?.textContent || '').includes(` + jsString(s) + `)`
}

// An operator's everyday path through the console in a real browser: sign
// in, create a project (remembered as a preference), chat with the agent
// and watch the answer stream in, find the session in the list, approve the
// command the agent asked to run from the approvals page, and read the
// finished transcript.
func TestConsoleChatSessionsAndApprovals(t *testing.T) {
	args := `{"command":"` + echoHello + `","target":"server"}`
	fake := llmfake.New(t,
		llmfake.Reply("Let me check the server.", llmfake.Call{Name: "run_command", Arguments: args}),
		llmfake.Text("Done: it printed hello."),
	)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("op@example.com")
	ctx, cancel := browser(t)
	defer cancel()
	q := func(sel string) chromedp.CSS { return chromedp.CSS(sel) }

	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1200, 900),
		chromedp.Navigate(env.URL+"/"),
		chromedp.WaitVisible(q(`#login`)),
		chromedp.SendKeys(q(`#login input[name=email]`), "op@example.com"),
		chromedp.SendKeys(q(`#login input[name=password]`), "correct horse battery"),
		click(`#login button`),
		chromedp.WaitVisible(q(`#nav`)),
	)
	if err != nil {
		t.Fatalf("sign in: %v", err)
	}
	// A new account lands in the set-up wizard; skipped, the chat asks for a
	// project and links to Projects.
	// Wait for the template list too: it loads after the form and pushes the
	// buttons down, and a click aimed before that lands on empty space.
	waitJS(t, ctx, "the onboarding wizard", `!!document.querySelector('#onboarding-form button.secondary') && document.querySelectorAll('#onboarding-template option').length > 1`)
	if err := chromedp.Do(ctx, click(`#onboarding-form button.secondary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "skipped to projects", `!!document.querySelector('#project-create')`)
	if got := c.must(200, "GET", "/api/onboarding/status", nil).JSON()["status"]; got != "skipped" {
		t.Fatalf("onboarding after skip: %v", got)
	}
	if err := chromedp.Do(ctx, click(`#nav a[href="/chat"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the chat asks for a project", textHas(`#view`, "Choose a project"))
	err = chromedp.Do(ctx,
		click(`#nav a[href="/projects"]`),
		chromedp.WaitVisible(q(`#project-create`)),
		chromedp.SendKeys(q(`#project-name`), "prod"),
		click(`#project-create button[type=submit]`),
	)
	if err != nil {
		t.Fatalf("create a project: %v", err)
	}
	waitJS(t, ctx, "the new project is current", `document.querySelector('#project-select').selectedOptions[0]?.textContent === 'prod'`)
	projects := c.must(200, "GET", "/api/projects", nil).List()
	if len(projects) != 1 {
		t.Fatalf("projects: %v", projects)
	}
	c.Project = projects[0]["id"].(string)
	pref := c.must(200, "GET", "/api/me/preferences/console.project", nil).JSON()
	if pref["value"] != c.Project {
		t.Fatalf("remembered project %v, want %s", pref["value"], c.Project)
	}

	// Chat: the streamed text, the tool call and the approval request appear.
	err = chromedp.Do(ctx,
		click(`#nav a[href="/chat"]`),
		chromedp.WaitVisible(q(`#chat-message`)),
		chromedp.SendKeys(q(`#chat-message`), "say hello on the server"),
		click(`#chat-send`),
	)
	if err != nil {
		t.Fatalf("send a chat message: %v", err)
	}
	waitJS(t, ctx, "the streamed answer", textHas(`#chat-log .msg.assistant .text`, "Let me check the server."))
	waitJS(t, ctx, "the tool call", textHas(`#chat-log .tool .args`, echoHello))
	waitJS(t, ctx, "the approval request", `!!document.querySelector('#chat-log .tool.waiting .decision button.approve')`)
	waitJS(t, ctx, "the turn waits", textHas(`#chat-status`, "Waiting for approval"))
	visit(t, ctx, "chat", 1200, 900)

	// The session is listed, waiting for approval.
	page := c.must(200, "GET", "/api/sessions/index", nil).JSON()
	items := page["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("sessions: %v", page)
	}
	sid := items[0].(map[string]any)["id"].(string)
	if loc, err := chromedp.Run(ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/chat/"+sid) {
		t.Fatalf("chat URL %q (%v), want it to name the session", loc, err)
	}
	if err := chromedp.Do(ctx, click(`#nav a[href="/sessions"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the session in the list", `!!document.querySelector('#sessions-table a[href="/sessions/`+sid+`"]')`)
	waitJS(t, ctx, "its waiting badge", textHas(`#sessions-table`, "waiting approval"))
	checkA11y(t, ctx, "sessions")

	// Approvals: approve the pending command; the agent resumes and ends.
	if err := chromedp.Do(ctx, click(`#nav a[href="/approvals"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the pending approval", textHas(`#approvals-list .approval`, echoHello))
	err = chromedp.Do(ctx,
		chromedp.SendKeys(q(`#approvals-list .approval .decision input[name=comment]`), "go ahead"),
		click(`#approvals-list .approval .decision button.approve`),
	)
	if err != nil {
		t.Fatalf("approve: %v", err)
	}
	waitJS(t, ctx, "the approval shows approved", textHas(`#approvals-list .approval .approval-status`, "approved"))
	checkA11y(t, ctx, "approvals")
	ap := c.must(200, "GET", "/api/approvals?session_id="+sid, nil).JSON()["items"].([]any)[0].(map[string]any)
	if ap["status"] != "approved" || ap["comment"] != "go ahead" {
		t.Fatalf("approval after the click: %v", ap)
	}

	// The session page follows the resumed turn to its end.
	if err := chromedp.Do(ctx, click(`#approvals-list .approval a[href="/sessions/`+sid+`"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the final answer in the transcript", textHas(`#session-log`, "Done: it printed hello."))
	waitJS(t, ctx, "the command's output", textHas(`#session-log .tool .output`, "hello"))
	waitJS(t, ctx, "the completed status", textHas(`#session-status-value`, "completed"))
	visit(t, ctx, "session", 1200, 900)
	if d := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON(); d["status"] != "completed" {
		t.Fatalf("session after approval: %v", d)
	}
}
