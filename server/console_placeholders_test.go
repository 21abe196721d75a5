package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Issue 40 item 10: a new account walks the wizard (a task from a template,
// no webhook), the dashboard, the account page without an avatar, a chat
// whose command is approved inline, and the finished session. None of them
// may show "null" or another placeholder, make a request that fails, or log
// an error: the dashboard asked every task for its webhook (404 for each
// without one), the account page drew a broken avatar (404), and the chat
// and the session page wrote a literal "null" where nothing was to be shown.
func TestConsoleNoPlaceholdersOrBrokenRequests(t *testing.T) {
	args := `{"command":"` + echoHello + `","target":"server"}`
	fake := llmfake.New(t,
		llmfake.Reply("Let me check the server.", llmfake.Call{Name: "run_command", Arguments: args}),
		llmfake.Text("Done: it printed hello."),
	)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("op@example.com")
	ctx, cancel := problemBrowser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}

	signIn(t, ctx, env.URL, "op@example.com")
	waitJS(t, ctx, "the onboarding wizard", `document.querySelectorAll('#onboarding-template option').length > 1`)
	forgetRequests(t, ctx) // the signed-out start asked who is signed in: 401 by design
	js(t, ctx, `(() => { const f = document.querySelector('#onboarding-form'); f.elements.org_name.value = 'Acme'; f.elements.project_name.value = 'prod';
		const s = f.elements.task_template; s.value = s.options[1].value; })()`)
	if err := chromedp.Do(ctx, click(`#onboarding-form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the alerts step", `!!document.querySelector('#onboarding-webhook')`)
	if err := chromedp.Do(ctx, click(`#onboarding-webhook button.secondary`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the last step", `!!document.querySelector('#onboarding-done a[href="/dashboard"]')`)
	checkClean(t, ctx, "wizard")
	if err := chromedp.Do(ctx, click(`#onboarding-done a[href="/dashboard"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the dashboard", `!!document.querySelector('#tile-approvals')`)
	checkClean(t, ctx, "dashboard with a task without a webhook")
	c.Project = c.must(200, "GET", "/api/projects", nil).List()[0]["id"].(string)
	if n := len(c.must(200, "GET", "/api/tasks", nil).JSON()["items"].([]any)); n != 1 {
		t.Fatalf("the wizard made %d tasks, want 1", n)
	}

	clickNav(t, ctx, "/account")
	waitJS(t, ctx, "the account page", `!!document.querySelector('#profile-form')`)
	waitSettled(t, ctx)
	if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('.avatar-initials')?.textContent === 'O' && !document.querySelector('img.avatar')`)); err != nil || !ok {
		t.Errorf("the account page without an avatar shows no initials, or an image (%v)", err)
	}
	checkClean(t, ctx, "account without an avatar")

	clickNav(t, ctx, "/chat")
	err := chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`#chat-message`)),
		chromedp.SendKeys(chromedp.CSS(`#chat-message`), "say hello on the server"),
		click(`#chat-send`),
	)
	if err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the inline approval", `!!document.querySelector('#chat-log .decision button.approve')`)
	// The same three choices as on the approvals page.
	waitJS(t, ctx, "deny with a comment, approve and remember", `!!document.querySelector('#chat-log .decision button.danger') && !!document.querySelector('#chat-log .decision input[name=comment]')
		&& !!document.querySelector('#chat-log .decision button.remember')`)
	waitJS(t, ctx, "the card waits", textHas(`#chat-log .tool.waiting .tool-status`, "needs approval"))
	if err := chromedp.Do(ctx, click(`#chat-log .decision button.approve`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the resumed turn's answer", textHas(`#chat-log`, "Done: it printed hello."))
	waitJS(t, ctx, "the command's output", textHas(`#chat-log .tool .output`, "hello"))
	// A compact card: tool, target, status, duration and exit code on one
	// line, the output folded away with a copy button.
	waitJS(t, ctx, "the card's head", textHas(`#chat-log .tool .tool-name`, "run_command")+` && `+textHas(`#chat-log .tool .tool-target`, "on server")+
		` && `+textHas(`#chat-log .tool .tool-status`, "ok")+` && /exit 0/.test(document.querySelector('#chat-log .tool .tool-meta').textContent)
		&& /\d+(\.\d)? (ms|s)/.test(document.querySelector('#chat-log .tool .tool-meta').textContent)`)
	waitJS(t, ctx, "the output folded with a copy button", `!document.querySelector('#chat-log .tool .tool-out').open && !!document.querySelector('#chat-log .tool .tool-out button.copy')`)
	checkClean(t, ctx, "chat after a command ran")

	sid := c.must(200, "GET", "/api/sessions/index", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	clickNav(t, ctx, "/sessions")
	if err := chromedp.Do(ctx, click(`#sessions-table a[href="/sessions/`+sid+`"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the finished session", textHas(`#session-status-value`, "completed"))
	checkClean(t, ctx, "session detail")
}
