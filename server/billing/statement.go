package billing

import (
	"context"
	"encoding/csv"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Unit is how a meter is priced: UnitPricesUSD[meter] is the price of Size
// of the meter's raw quantity (a million tokens, a GiB-month); Raw names
// the raw quantity's own unit.
type Unit struct {
	Name string
	Size float64
	Raw  string
}

// Units of each meter. llm_cost_usd's price is a multiplier of the model
// cost (1 passes it through, 1.2 adds a fifth).
var Units = map[string]Unit{
	MeterAgentRuns:      {"run", 1, "runs"},
	MeterAgentTokens:    {"1M tokens", 1e6, "tokens"},
	MeterLLMCost:        {"USD of model cost", 1, "USD"},
	MeterWebhookEvents:  {"1k events", 1e3, "events"},
	MeterKnowledgeBytes: {"GiB", 1 << 30, "bytes"},
}

// Line is one line item of a statement. Quantity is in the unit that is
// priced, so Quantity × UnitPriceUSD is AmountUSD (rounded to the
// micro-dollar); RawQuantity is what was recorded, in RawUnit.
type Line struct {
	ProjectID    string  `json:"project_id" doc:"empty for the plan fee and org-wide use"`
	ProjectName  string  `json:"project_name"`
	Meter        string  `json:"meter" doc:"plan for the flat fee, else a meter"`
	Quantity     float64 `json:"quantity" doc:"billed quantity, in unit (quantity × unit_price_usd = amount_usd, rounded to 6 decimals)"`
	Unit         string  `json:"unit" doc:"the unit unit_price_usd is for (run, 1M tokens, USD of model cost, 1k events, GiB, month)"`
	RawQuantity  float64 `json:"raw_quantity" doc:"the quantity as recorded, in raw_unit"`
	RawUnit      string  `json:"raw_unit" doc:"runs, tokens, USD, events, bytes or month"`
	UnitPriceUSD float64 `json:"unit_price_usd"`
	AmountUSD    float64 `json:"amount_usd"`
}

// Statement is one org's monthly statement.
type Statement struct {
	OrgID       string    `json:"org_id"`
	Period      string    `json:"period"`
	Start       time.Time `json:"start"`
	End         time.Time `json:"end"`
	Status      string    `json:"status" doc:"open (the month is running) or closed"`
	PlanID      string    `json:"plan_id"`
	PlanName    string    `json:"plan_name"`
	Currency    string    `json:"currency"`
	Lines       []Line    `json:"lines"`
	TotalUSD    float64   `json:"total_usd"`
	GeneratedAt time.Time `json:"generated_at"`
}

// round6 keeps amounts exact enough to re-add (statements of sub-cent
// model costs must still sum to their sessions).
func round6(v float64) float64 { return math.Round(v*1e6) / 1e6 }

// round9 keeps billed quantities to about a byte of a GiB, and free of
// float noise; amounts are computed from the rounded quantity, so the
// line multiplies out as printed.
func round9(v float64) float64 { return math.Round(v*1e9) / 1e9 }

// Statement builds org's statement for period from its metered usage:
// the plan's flat fee, then one line per project and meter.
func (s *Service) Statement(ctx context.Context, orgID, period string) (*Statement, error) {
	h, rows, err := s.Meter(ctx, orgID, period, false)
	if err != nil {
		return nil, err
	}
	names, err := s.DB.ProjectNames(ctx, orgID)
	if err != nil {
		return nil, err
	}
	start, end, _ := store.PeriodBounds(period)
	plan, ok := s.Catalog.Get(h.PlanID)
	if !ok {
		plan = s.PlanOf(&store.BillingAccount{})
	}
	st := &Statement{OrgID: orgID, Period: period, Start: start, End: end, Status: "open", PlanID: plan.ID, PlanName: plan.Name,
		Currency: "usd", Lines: []Line{}, GeneratedAt: s.Now().UTC()}
	if h.Closed {
		st.Status = "closed"
	}
	if plan.MonthlyPriceUSD > 0 {
		st.Lines = append(st.Lines, Line{Meter: "plan", Quantity: 1, Unit: "month", RawQuantity: 1, RawUnit: "month",
			UnitPriceUSD: plan.MonthlyPriceUSD, AmountUSD: plan.MonthlyPriceUSD})
	}
	SortRows(rows)
	for _, r := range rows {
		u := Units[r.Meter]
		price, ok := plan.UnitPricesUSD[r.Meter]
		if !ok && r.Meter == MeterLLMCost {
			price = 1 // model cost passes through unless the plan says otherwise
		}
		qty := round9(r.Quantity / u.Size)
		st.Lines = append(st.Lines, Line{ProjectID: r.ProjectID, ProjectName: names[r.ProjectID], Meter: r.Meter,
			Quantity: qty, Unit: u.Name, RawQuantity: round6(r.Quantity), RawUnit: u.Raw, UnitPriceUSD: price, AmountUSD: round6(qty * price)})
	}
	for _, l := range st.Lines {
		st.TotalUSD += l.AmountUSD
	}
	st.TotalUSD = round6(st.TotalUSD)
	return st, nil
}

// WriteCSV writes the statement as CSV: one row per line item, then a total
// row. The raw columns come last, so the first eight keep their places.
func (st *Statement) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
	_ = cw.Write([]string{"period", "project_id", "project_name", "meter", "quantity", "unit", "unit_price_usd", "amount_usd", "raw_quantity", "raw_unit"})
	for _, l := range st.Lines {
		_ = cw.Write([]string{st.Period, l.ProjectID, csvSafe(l.ProjectName), l.Meter, f(l.Quantity), l.Unit, f(l.UnitPriceUSD), f(l.AmountUSD),
			f(l.RawQuantity), l.RawUnit})
	}
	_ = cw.Write([]string{st.Period, "", "", "total", "", "", "", f(st.TotalUSD), "", ""})
	cw.Flush()
	return cw.Error()
}

// csvSafe keeps a user-chosen name from being read as a formula by a
// spreadsheet (CSV injection).
func csvSafe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r') {
		return "'" + s
	}
	return s
}
