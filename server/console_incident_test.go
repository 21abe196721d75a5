package server_test

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// The incident page is the investigation's home: an alert starts the
// investigation, the scripted model reports a finding citing the evidence
// pack, and the page shows the finding (summary, hypotheses with their
// confidence and evidence, next steps), the evidence, the change of the
// hour before, the investigation's events inline and the alerts grouped by
// fingerprint; a next step becomes an approval request from the page.
func TestConsoleIncidentWithFinding(t *testing.T) {
	finding := `{"summary":"The shop v2.0 deploy cut the connection pool to 5.",
		"hypotheses":[{"cause":"the v2.0 deploy set pool_size=5","confidence":"high","evidence":["ev1"]}],
		"impact":"checkout p99 above 2s",
		"next_steps":[{"action":"roll back to v1.9","command":"echo rollback >> rollback.log","target":"server","needs_approval":true}]}`
	fake := llmfake.New(t,
		llmfake.Reply("Checking what changed.", llmfake.Call{ID: "call_finding", Name: "report_finding", Arguments: finding}),
		llmfake.Text("Roll back recommended: see the finding."),
	)
	env := newEnv(t, withLLM(fake), allowLocal)
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	c.must(201, "POST", "/api/changes", map[string]any{"title": "deploy shop v2.0 (pool_size 20 -> 5)", "service": "api",
		"occurred_at": time.Now().UTC().Add(-10 * time.Minute).Format(time.RFC3339)})
	am := newHook(t, env, c, map[string]any{"provider": "alertmanager"})
	if r := am.post(t, amAlert("g-new", "fp-new", "firing"), bearer(am.secret)); r.Status != 202 {
		t.Fatalf("alert: %d %s", r.Status, r.Body)
	}
	am.dispatch(t)
	inc := c.must(200, "GET", "/api/incidents", nil).JSON()["items"].([]any)[0].(map[string]any)["id"].(string)
	detail := pollUntil(t, "the finding", func() map[string]any { return c.must(200, "GET", "/api/incidents/"+inc, nil).JSON() },
		func(m map[string]any) bool { return m["latest_finding"] != nil })
	sid := detail["latest_finding"].(map[string]any)["session_id"].(string)
	pollUntil(t, "the run's end", func() map[string]any { return c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON() },
		func(m map[string]any) bool { return m["status"] != "running" && m["status"] != "pending" })

	ctx, cancel := problemBrowser(t)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1400, 900)); err != nil {
		t.Fatal(err)
	}
	signIn(t, ctx, env.URL, "oncall@example.com")
	waitJS(t, ctx, "signed in", `!!document.querySelector('#nav a')`)
	waitSettled(t, ctx)
	forgetRequests(t, ctx)
	clickNav(t, ctx, "/incidents")
	if err := chromedp.Do(ctx, click(`#incidents-list a[href="/incidents/`+inc+`"]`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the finding on top", textHas(`#incident-finding`, "cut the connection pool to 5")+` && `+textHas(`#incident-finding .hypothesis`, "high confidence")+
		` && !!document.querySelector('#incident-finding .hypothesis a.ref[href="#evidence-ev1"]') && `+textHas(`#incident-finding .next-step`, "roll back to v1.9"))
	waitJS(t, ctx, "the evidence pack", `!!document.querySelector('#incident-evidence #evidence-ev1')`)
	waitJS(t, ctx, "the change of the hour before", textHas(`#incident-changes`, "deploy shop v2.0"))
	waitJS(t, ctx, "the investigation inline", textHas(`#incident-live-log`, "Roll back recommended")+` && !!document.querySelector('#incident-live-log .tool[data-call-id="call_finding"]')`)
	waitJS(t, ctx, "alerts by fingerprint", `!!document.querySelector('#incident-alerts .alert-group[data-fingerprint="fp-new"]') && /first .* last /.test(document.querySelector('#incident-alerts .alert-group').textContent)`)
	visit(t, ctx, "incident-finding", 1400, 900)
	checkClean(t, ctx, "incident with a finding")

	if err := chromedp.Do(ctx, click(`#incident-finding .next-step button.request-approval`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "the approval requested", textHas(`#incident-finding .next-step`, "Approval requested"))
	if n := len(c.must(200, "GET", "/api/approvals?status=pending", nil).JSON()["items"].([]any)); n != 1 {
		t.Fatalf("pending approvals after the click: %d, want 1", n)
	}
}
