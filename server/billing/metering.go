package billing

import (
	"context"
	"sort"

	"github.com/opsagent/opsagent/store"
)

// Meter returns an org's metered usage of period. The current month is
// recomputed from the recorded data on every call (cheap aggregates over
// indexed rows); an ended month is computed once after its end and then
// read back, because retention later deletes the rows it summed. force
// recomputes an ended month too (its knowledge snapshot is kept).
func (s *Service) Meter(ctx context.Context, orgID, period string, force bool) (*store.UsagePeriod, []store.MeterRow, error) {
	if _, _, err := store.PeriodBounds(period); err != nil {
		return nil, nil, err
	}
	current := store.Period(s.Now())
	stored, err := s.DB.FindUsagePeriod(ctx, orgID, period)
	if err != nil && !store.IsNotFound(err) {
		return nil, nil, err
	}
	if stored != nil && stored.Closed && !force {
		rows, err := s.DB.FindUsage(ctx, orgID, period)
		return stored, rows, err
	}
	rows, err := s.DB.ComputeUsage(ctx, orgID, period)
	if err != nil {
		return nil, nil, err
	}
	closed := period < current
	if !closed && s.KnowledgeUse != nil {
		_, byProject := s.KnowledgeUse(orgID)
		for p, n := range byProject {
			rows = append(rows, store.MeterRow{ProjectID: p, Meter: MeterKnowledgeBytes, Quantity: float64(n)})
		}
	}
	h := store.UsagePeriod{Period: period, Closed: closed}
	if stored != nil && stored.Closed {
		h.PlanID = stored.PlanID // the plan that month was priced with stays
	} else {
		a, err := s.DB.FindBillingAccount(ctx, orgID)
		if err != nil {
			return nil, nil, err
		}
		h.PlanID = s.PlanOf(a).ID
	}
	if err := s.DB.SaveUsage(ctx, orgID, h, rows, closed); err != nil {
		return nil, nil, err
	}
	out, err := s.DB.FindUsage(ctx, orgID, period)
	if err != nil {
		return nil, nil, err
	}
	got, err := s.DB.FindUsagePeriod(ctx, orgID, period)
	return got, out, err
}

// Totals sums rows per meter, every meter present (zero when unused).
func Totals(rows []store.MeterRow) map[string]float64 {
	t := map[string]float64{}
	for _, m := range Meters() {
		t[m] = 0
	}
	for _, r := range rows {
		t[r.Meter] += r.Quantity
	}
	return t
}

// SortRows orders rows by project, then by meter in statement order.
func SortRows(rows []store.MeterRow) {
	rank := map[string]int{}
	for i, m := range Meters() {
		rank[m] = i
	}
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].ProjectID != rows[j].ProjectID {
			return rows[i].ProjectID < rows[j].ProjectID
		}
		return rank[rows[i].Meter] < rank[rows[j].Meter]
	})
}
