package server_test

import (
	"context"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/opsagent/opsagent/store"
)

// The billing page in a real browser: plan and usage bars against the
// quotas, switching plans, a statement's lines, and (stripe mode) the
// upgrade and portal buttons; axe-checked in both themes and at phone width.
func TestConsoleBilling(t *testing.T) {
	env := billingEnv(t, "showback", "tiny")
	c := env.register("bill@example.com")
	org := c.orgOf()
	proj := c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	ctx0 := context.Background()
	s := &store.AgentSession{OrgID: org, ProjectID: proj, Source: "webchat", Status: "completed", TokensIn: 1200, TokensOut: 300, Cost: 0.42}
	if err := env.DB.Write(ctx0, func(tx *store.Tx) error { return store.CreateAgentSessionTx(ctx0, tx, s) }); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := browser(t)
	defer cancel()
	signIn(t, ctx, env.URL, "bill@example.com")
	waitJS(t, ctx, "signed in", `!document.getElementById('nav').hidden`)
	clickNav(t, ctx, "/billing")
	waitJS(t, ctx, "plan shown", textHas("#billing-plan", "Tiny"))
	waitJS(t, ctx, "projects bar", `!!document.querySelector('[data-quota=projects] meter')`)
	waitJS(t, ctx, "runs bar", textHas("[data-quota=agent_runs_per_month]", "1 of 2"))
	waitJS(t, ctx, "statement row", `!!document.querySelector('#billing-statements tr[data-period="`+store.Period(env.clock())+`"]')`)
	visit(t, ctx, "billing", 1200, 900)

	js(t, ctx, `document.querySelector('#billing-statements tr[data-period] button').click()`)
	waitJS(t, ctx, "statement lines", textHas("#statement-"+store.Period(env.clock()), "llm_cost_usd"))
	if err := chromedp.Do(ctx, click(`#plan-roomy`)); err != nil {
		t.Fatal(err)
	}
	waitJS(t, ctx, "switched plan", textHas("#billing-plan", "Roomy"))
	if got := c.must(200, "GET", "/api/billing", nil).JSON()["plan"].(map[string]any)["id"]; got != "roomy" {
		t.Fatalf("plan after switching in the console: %v", got)
	}

	// Stripe mode shows the upgrade (Checkout) and portal buttons.
	base := stripeMock(t)
	senv := billingEnv(t, "stripe", "tiny", stripeConfig(base))
	senv.register("pay@example.com")
	signIn(t, ctx, senv.URL, "pay@example.com")
	waitJS(t, ctx, "signed in (stripe)", `!document.getElementById('nav').hidden`)
	clickNav(t, ctx, "/billing")
	waitJS(t, ctx, "upgrade button", textHas("#plan-pro", "Upgrade"))
	waitJS(t, ctx, "portal button", `!!document.getElementById('billing-portal')`)
	checkA11y(t, ctx, "billing (stripe)")
}
