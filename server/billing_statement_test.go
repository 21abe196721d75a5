package server_test

import (
	"context"
	"encoding/csv"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

type stmtLine struct {
	ProjectID    string  `json:"project_id"`
	Meter        string  `json:"meter"`
	Quantity     float64 `json:"quantity"`
	RawQuantity  float64 `json:"raw_quantity"`
	UnitPriceUSD float64 `json:"unit_price_usd"`
	AmountUSD    float64 `json:"amount_usd"`
}

type stmt struct {
	Period   string     `json:"period"`
	Status   string     `json:"status"`
	PlanID   string     `json:"plan_id"`
	Lines    []stmtLine `json:"lines"`
	TotalUSD float64    `json:"total_usd"`
}

func (s *stmt) line(project, meter string) *stmtLine {
	for i := range s.Lines {
		if s.Lines[i].ProjectID == project && s.Lines[i].Meter == meter {
			return &s.Lines[i]
		}
	}
	return nil
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// TestBillingStatementsMatchRecordedData records sessions and webhook
// events in a past month, then checks that the statement sums exactly
// them, per project, in JSON and CSV; an ended month stays frozen after
// retention deletes rows, and a recompute is idempotent.
func TestBillingStatementsMatchRecordedData(t *testing.T) {
	env := billingEnv(t, "showback", "metered")
	c := env.register("stmt@example.com")
	org := c.orgOf()
	p1 := c.must(201, "POST", "/api/projects", map[string]any{"name": "prod"}).JSON()["id"].(string)
	p2 := c.must(201, "POST", "/api/projects", map[string]any{"name": "=HYPERLINK(\"x\")"}).JSON()["id"].(string)
	c.Project = p1
	f := newHook(t, env, c, map[string]any{"provider": "generic", "scheme": "bearer"})

	env.UseClock()
	env.Advance(-40 * 24 * time.Hour)
	past := store.Period(env.clock())
	ctx := context.Background()
	sessions := []store.AgentSession{
		{OrgID: org, ProjectID: p1, Source: "webchat", Status: "completed", TokensIn: 100, TokensOut: 50, Cost: 0.25},
		{OrgID: org, ProjectID: p1, Source: "webchat", Status: "completed", TokensIn: 10, TokensOut: 5, Cost: 0.125},
		{OrgID: org, ProjectID: p2, Source: "task", Status: "failed", TokensIn: 1000, Cost: 1},
	}
	for i := range sessions {
		if err := env.DB.Write(ctx, func(tx *store.Tx) error { return store.CreateAgentSessionTx(ctx, tx, &sessions[i]) }); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		if r := f.post(t, []byte(`{"alert":`+strconv.Itoa(i)+`}`), bearer(f.secret)); r.Status != 202 {
			t.Fatalf("delivery %d: got %d %s", i, r.Status, r.Body)
		}
	}
	env.Advance(40 * 24 * time.Hour)

	var st stmt
	c.must(200, "GET", "/api/billing/statements/"+past, nil).decode(t, &st)
	if st.Status != "closed" || st.PlanID != "metered" {
		t.Fatalf("got status %s plan %s, want closed metered", st.Status, st.PlanID)
	}
	// What the database recorded in that month, summed independently of the
	// metering code (the deliveries dispatched the task: those runs count
	// too, in the month their session was created).
	start, end, _ := store.PeriodBounds(past)
	inPast := ` AND created_at >= '` + store.TS(start) + `' AND created_at < '` + store.TS(end) + `'`
	want := 10 + 3*2.0/1000
	for _, p := range []string{p1, p2} {
		var runs, tokens, cost float64
		if err := env.DB.Reader().QueryRow(`SELECT count(*), COALESCE(SUM(tokens_in + tokens_out), 0), COALESCE(SUM(cost), 0)
			FROM agent_sessions WHERE project_id = ?`+inPast, p).Scan(&runs, &tokens, &cost); err != nil {
			t.Fatal(err)
		}
		for meter, want := range map[string]float64{"agent_runs": runs, "agent_tokens": tokens, "llm_cost_usd": cost} {
			l := st.line(p, meter)
			if l == nil || !near(l.RawQuantity, want) {
				t.Fatalf("project %s meter %s: got %+v, want quantity %g", p, meter, l, want)
			}
		}
		want += runs*0.5 + cost*1.5
	}
	if l := st.line(p1, "webhook_events"); l == nil || l.RawQuantity != 3 || l.Quantity != 0.003 || !near(l.AmountUSD, 0.006) {
		t.Fatalf("webhook events line: got %+v, want 3 events at $2/1k", l)
	}
	if l := st.line(p1, "llm_cost_usd"); !near(l.AmountUSD, 0.375*1.5) {
		t.Fatalf("llm cost line: got %+v, want the cost times 1.5", l)
	}
	if l := st.line("", "plan"); l == nil || l.AmountUSD != 10 {
		t.Fatalf("plan fee line: got %+v", l)
	}
	sum := 0.0
	for _, l := range st.Lines {
		sum += l.AmountUSD
	}
	if !near(sum, st.TotalUSD) || !near(st.TotalUSD, want) {
		t.Fatalf("total %g, lines sum %g, want %g", st.TotalUSD, sum, want)
	}

	// CSV export: same lines, the total row, a formula-like name neutralised.
	r := c.must(200, "GET", "/api/billing/statements/"+past+"?format=csv", nil)
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
		t.Fatalf("content type %q", r.Header.Get("Content-Type"))
	}
	recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
	if err != nil || len(recs) != len(st.Lines)+2 {
		t.Fatalf("csv: %d records (%v), want %d", len(recs), err, len(st.Lines)+2)
	}
	if last := recs[len(recs)-1]; last[3] != "total" || last[7] != strconv.FormatFloat(st.TotalUSD, 'f', -1, 64) {
		t.Fatalf("csv total row %v, want %g", last, st.TotalUSD)
	}
	if !strings.Contains(string(r.Body), "'=HYPERLINK") {
		t.Fatalf("csv keeps a formula-like project name unescaped:\n%s", r.Body)
	}

	// Retention deletes a session of the ended month: the statement stays.
	if err := env.DB.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.Exec(`DELETE FROM agent_sessions WHERE id = ?`, sessions[2].ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	var again stmt
	c.must(200, "GET", "/api/billing/statements/"+past, nil).decode(t, &again)
	if !near(again.TotalUSD, st.TotalUSD) {
		t.Fatalf("closed statement changed after retention: %g, was %g", again.TotalUSD, st.TotalUSD)
	}
	// An explicit recompute re-reads the recorded data, and is idempotent.
	one := c.must(200, "POST", "/api/billing/usage/recompute?period="+past, nil).JSON()
	two := c.must(200, "POST", "/api/billing/usage/recompute?period="+past, nil).JSON()
	var runsLeft float64
	if err := env.DB.Reader().QueryRow(`SELECT count(*) FROM agent_sessions WHERE org_id = ?`+inPast, org).Scan(&runsLeft); err != nil {
		t.Fatal(err)
	}
	if one["meters"].(map[string]any)["agent_runs"] != runsLeft || two["meters"].(map[string]any)["agent_runs"] != runsLeft {
		t.Fatalf("recompute: got %v then %v, want %g runs", one["meters"], two["meters"], runsLeft)
	}

	// History and the current month; a future month is refused.
	h := c.must(200, "GET", "/api/billing/usage/history", nil).JSON()["items"].([]any)
	if len(h) != 2 || h[0].(map[string]any)["period"] != store.Period(env.clock()) || h[1].(map[string]any)["period"] != past {
		t.Fatalf("history: %v", h)
	}
	b := c.must(200, "GET", "/api/billing/usage/breakdown?period="+past, nil).JSON()["items"].([]any)
	if len(b) == 0 {
		t.Fatalf("breakdown empty")
	}
	next := store.Period(env.clock().AddDate(0, 1, 0))
	wantValidation(t, c.do("GET", "/api/billing/usage?period="+next, nil), "query", "period")
	wantValidation(t, c.do("GET", "/api/billing/statements/2026-13", nil), "path", "period")
	list := c.must(200, "GET", "/api/billing/statements", nil).JSON()["items"].([]any)
	if len(list) != 2 {
		t.Fatalf("statements: %v", list)
	}
}
