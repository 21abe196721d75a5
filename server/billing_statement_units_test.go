package server_test

import (
	"context"
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// pricedPlans prices every meter, in units larger than the raw ones.
const pricedPlans = `[{"id": "priced", "name": "Priced", "selectable": true, "monthly_price_usd": 5,
  "unit_prices_usd": {"agent_runs": 0.5, "agent_tokens": 3, "llm_cost_usd": 1.5, "webhook_events": 2, "knowledge_bytes": 4}}]`

// Every statement line reconciles: quantity is in the unit the price is
// for, so quantity × unit price is the amount (to the micro-dollar it is
// rounded to), and the raw quantity is shown beside it, in JSON and CSV.
func TestBillingStatementLinesReconcile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "plans.json")
	if err := os.WriteFile(path, []byte(pricedPlans), 0o600); err != nil {
		t.Fatal(err)
	}
	env := newEnv(t, func(c *server.Config) {
		c.Signup, c.Billing, c.BillingPlans, c.BillingDefaultPlan = "open", "showback", path, "priced"
	})
	c := env.register("units@example.com")
	withProject(t, env, c)
	org := c.orgOf()
	ctx := context.Background()
	s := store.AgentSession{OrgID: org, ProjectID: c.Project, Source: "webchat", Status: "completed", TokensIn: 123_456, TokensOut: 789, Cost: 0.0421}
	if err := env.DB.Write(ctx, func(tx *store.Tx) error { return store.CreateAgentSessionTx(ctx, tx, &s) }); err != nil {
		t.Fatal(err)
	}
	c.must(201, "POST", "/api/knowledge/documents", map[string]any{"collection": "runbooks", "name": "disk.md", "content": strings.Repeat("x", 100_000)})
	f := newHook(t, env, c, map[string]any{"provider": "generic", "scheme": "bearer"})
	for i := range 7 {
		if r := f.post(t, []byte(`{"alert":`+strconv.Itoa(i)+`}`), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("delivery %d: got %d %s", i, r.Status, r.Body)
		}
	}

	period := store.Period(env.clock())
	raw := map[string]struct {
		unit, rawUnit string
		size          float64
	}{
		"plan": {"month", "month", 1}, "agent_runs": {"run", "runs", 1}, "agent_tokens": {"1M tokens", "tokens", 1e6},
		"llm_cost_usd": {"USD of model cost", "USD", 1}, "webhook_events": {"1k events", "events", 1e3}, "knowledge_bytes": {"GiB", "bytes", 1 << 30},
	}
	reconciles := func(where string, qty, price, amount, rawQty float64, unit, rawUnit, meter string) {
		t.Helper()
		want, ok := raw[meter]
		if !ok {
			t.Fatalf("%s: unexpected meter %q", where, meter)
		}
		if unit != want.unit || rawUnit != want.rawUnit {
			t.Errorf("%s %s: units %q (raw %q), want %q (raw %q)", where, meter, unit, rawUnit, want.unit, want.rawUnit)
		}
		if math.Abs(qty-rawQty/want.size) > 1e-9 {
			t.Errorf("%s %s: quantity %g for a raw %g %s, want %g %s", where, meter, qty, rawQty, rawUnit, rawQty/want.size, want.unit)
		}
		if math.Abs(qty*price-amount) > 5e-7 {
			t.Errorf("%s %s: %g %s × $%g = %g, but the amount is $%g", where, meter, qty, unit, price, qty*price, amount)
		}
	}
	var st struct {
		Lines []struct {
			Meter        string  `json:"meter"`
			Quantity     float64 `json:"quantity"`
			Unit         string  `json:"unit"`
			RawQuantity  float64 `json:"raw_quantity"`
			RawUnit      string  `json:"raw_unit"`
			UnitPriceUSD float64 `json:"unit_price_usd"`
			AmountUSD    float64 `json:"amount_usd"`
		} `json:"lines"`
	}
	c.must(200, "GET", "/api/billing/statements/"+period, nil).decode(t, &st)
	seen := map[string]float64{}
	for _, l := range st.Lines {
		reconciles("json", l.Quantity, l.UnitPriceUSD, l.AmountUSD, l.RawQuantity, l.Unit, l.RawUnit, l.Meter)
		seen[l.Meter] += l.RawQuantity
	}
	for meter, want := range map[string]float64{"agent_tokens": 124_245, "webhook_events": 7, "knowledge_bytes": 100_000} {
		if seen[meter] < want {
			t.Errorf("raw %s: %g, want at least %g", meter, seen[meter], want)
		}
	}
	r := c.must(200, "GET", "/api/billing/statements/"+period+"?format=csv", nil)
	recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(recs) != len(st.Lines)+2 {
		t.Fatalf("csv: %d records (%v), want %d", len(recs), err, len(st.Lines)+2)
	}
	head := map[string]int{}
	for i, h := range recs[0] {
		head[h] = i
	}
	for _, col := range []string{"meter", "quantity", "unit", "unit_price_usd", "amount_usd", "raw_quantity", "raw_unit"} {
		if _, ok := head[col]; !ok {
			t.Fatalf("csv header %v has no %s", recs[0], col)
		}
	}
	num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
	for _, rec := range recs[1 : len(recs)-1] {
		reconciles("csv", num(rec[head["quantity"]]), num(rec[head["unit_price_usd"]]), num(rec[head["amount_usd"]]),
			num(rec[head["raw_quantity"]]), rec[head["unit"]], rec[head["raw_unit"]], rec[head["meter"]])
	}
}
