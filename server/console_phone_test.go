package server_test

import (
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The 3 a.m. case: on a 390x844 phone, an operator opens the approval the
// agent is waiting for, reads the rule approve-and-remember will create,
// confirms, and the finished session page shows no stray reason line.
func TestConsolePhoneApproveAndRemember(t *testing.T) {
	const command = "echo hello"
	fake := llmfake.New(t,
		llmfake.Reply("Checking.", llmfake.Call{Name: "run_command", Arguments: `{"command":"` + command + `","target":"server"}`}),
		llmfake.Text("It printed hello."),
	)
	env, base := consoleEnv(t, withLLM(fake), allowLocal)
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	_, evs := c.stream("POST", "/api/chat", map[string]any{"message": "say hello"}, 0, func(e sseEvent) bool { return e.Type == "approval.required" })
	sid := lastOf(t, evs, "session").Data["session_id"].(string)

	ctx, cancel := browser(t)
	defer cancel()
	const W, H = 390, 844
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(W, H, chromedp.EmulateMobile)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, base, "oncall@example.com")
	waitJS(t, ctx, "the dashboard counts the approval", textHas(`#tile-approvals`, "1"))
	visit(t, ctx, "oncall-dashboard", W, H)
	if err := chromedp.Do(ctx, click(`#tile-approvals a`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the pending approval", textHas(`#approvals-list .approval`, command))
	// Nothing on the page is wider than the phone.
	if wide, _ := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`)); wide {
		t.Fatal("the approvals page scrolls sideways on a phone")
	}
	if err := chromedp.Do(ctx, click(`#approvals-list button.remember`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the rule is shown first", textHas(`#approvals-list .rule-preview`, command))
	visit(t, ctx, "oncall-approve-and-remember", W, H)
	if rules := c.must(200, "GET", "/api/rules", nil).JSON()["items"].([]any); len(rules) != 0 {
		t.Fatalf("a rule exists before the confirmation: %v", rules)
	}
	if err := chromedp.Do(ctx, click(`#approvals-list button.confirm-remember`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "approved with a rule", textHas(`#approvals-list .approval`, "A rule now pre-approves it."))
	rules := c.must(200, "GET", "/api/rules", nil).JSON()["items"].([]any)
	if len(rules) != 1 || rules[0].(map[string]any)["pattern"] != command || rules[0].(map[string]any)["effect"] != "allow" {
		t.Fatalf("rules after approve-and-remember: %v", rules)
	}

	// The finished session: completed, and no "null" (or any) reason line.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/sessions/"+sid)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the run completes", textHas(`#session-status-value`, "completed"))
	waitJS(t, ctx, "the answer", textHas(`#session-log`, "It printed hello."))
	stray, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#view *')]
		.filter(e => e.children.length === 0 && /^\s*(null|undefined)\s*$/.test(e.textContent)).map(e => e.outerHTML)`))
	if err != nil || len(stray) > 0 {
		t.Fatalf("the session page shows stray null lines (%v): %v", err, stray)
	}
	if n, _ := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#view .session-reason, #view p.error').length`)); n != 0 {
		t.Fatalf("a completed session shows %d reason/error line(s)", n)
	}
	visit(t, ctx, "oncall-session", W, H)
}
