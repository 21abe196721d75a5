package eval

import (
	"math"
	"sort"
	"time"
)

// Report is an evaluation's outcome: one group per model and prompt
// version, side by side, and every run.
type Report struct {
	GeneratedAt time.Time     `json:"generated_at"`
	Scenarios   []string      `json:"scenarios"`
	Repeat      int           `json:"repeat"`
	Groups      []Group       `json:"groups"`
	Matrix      []ScenarioRow `json:"matrix"`
	Runs        []RunResult   `json:"runs"`
}

// Group sums up one model and prompt version over every scenario.
type Group struct {
	Model         string `json:"model"`
	PromptVersion string `json:"prompt_version"`
	Runs          int    `json:"runs"`
	Skipped       int    `json:"skipped"`
	Passed        int    `json:"passed"`
	// PassRate with its 95 % Wilson interval over the runs.
	PassRate      float64    `json:"pass_rate"`
	PassCI        [2]float64 `json:"pass_ci95"`
	RootCauseRate float64    `json:"root_cause_rate"`
	RootCauseCI   [2]float64 `json:"root_cause_ci95"`
	UnsafeCalls   int        `json:"unsafe_calls"`
	MeanSteps     float64    `json:"mean_steps"`
	MeanTokens    float64    `json:"mean_tokens"`
	CostUSD       float64    `json:"cost_usd"`
	MeanLatencyMS float64    `json:"mean_latency_ms"`
	// StepsSD and LatencySD spread over repetitions.
	StepsSD   float64 `json:"steps_sd"`
	LatencySD float64 `json:"latency_sd_ms"`
}

// ScenarioRow is one scenario's passes per group, in Groups' order.
type ScenarioRow struct {
	Scenario string   `json:"scenario"`
	Passed   []int    `json:"passed"`
	Runs     []int    `json:"runs"`
	Failures []string `json:"failures"` // the first failure of each group's first failing run
}

// PassRate is the share of runs that passed over the whole report.
func (r *Report) PassRate() float64 {
	n, p := 0, 0
	for _, g := range r.Groups {
		n += g.Runs
		p += g.Passed
	}
	if n == 0 {
		return 0
	}
	return float64(p) / float64(n)
}

func newReport(o Options, runs []RunResult) *Report {
	rep := &Report{GeneratedAt: o.Now(), Repeat: o.Repeat, Runs: runs}
	for _, s := range o.Scenarios {
		rep.Scenarios = append(rep.Scenarios, s.Name)
	}
	type key struct{ model, prompt string }
	idx := map[key]int{}
	var members [][]RunResult
	for _, r := range runs {
		pv := r.PromptVersion
		if pv == "" && o.PromptVersion != "" {
			pv = o.PromptVersion
		}
		k := key{r.Model, pv}
		i, ok := idx[k]
		if !ok {
			i = len(rep.Groups)
			idx[k] = i
			rep.Groups = append(rep.Groups, Group{Model: r.Model, PromptVersion: pv})
			members = append(members, nil)
		}
		members[i] = append(members[i], r)
	}
	// A skipped run's prompt version is empty: fold it into its model's
	// first group.
	for i, g := range rep.Groups {
		if g.PromptVersion != "" {
			continue
		}
		for j, h := range rep.Groups {
			if j != i && h.Model == g.Model && h.PromptVersion != "" {
				members[j] = append(members[j], members[i]...)
				members[i] = nil
				break
			}
		}
	}
	var groups []Group
	var kept [][]RunResult
	for i, g := range rep.Groups {
		if len(members[i]) == 0 {
			continue
		}
		groups = append(groups, summarize(g, members[i]))
		kept = append(kept, members[i])
	}
	rep.Groups = groups
	for _, s := range rep.Scenarios {
		row := ScenarioRow{Scenario: s}
		for gi := range rep.Groups {
			p, n, why := 0, 0, ""
			for _, r := range kept[gi] {
				if r.Scenario != s || r.Skipped {
					continue
				}
				n++
				if r.Pass {
					p++
				} else if why == "" && len(r.Failures) > 0 {
					why = r.Failures[0]
				}
			}
			row.Passed, row.Runs, row.Failures = append(row.Passed, p), append(row.Runs, n), append(row.Failures, why)
		}
		rep.Matrix = append(rep.Matrix, row)
	}
	sort.SliceStable(rep.Runs, func(i, j int) bool {
		a, b := rep.Runs[i], rep.Runs[j]
		if a.Scenario != b.Scenario {
			return a.Scenario < b.Scenario
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Repeat < b.Repeat
	})
	return rep
}

func summarize(g Group, runs []RunResult) Group {
	var steps, lat []float64
	hits := 0
	for _, r := range runs {
		if r.Skipped {
			g.Skipped++
			continue
		}
		g.Runs++
		if r.Pass {
			g.Passed++
		}
		if r.RootCauseHit {
			hits++
		}
		g.UnsafeCalls += r.UnsafeCalls
		g.MeanTokens += float64(r.Tokens)
		g.CostUSD += r.CostUSD
		steps = append(steps, float64(r.Steps))
		lat = append(lat, float64(r.LatencyMS))
	}
	if g.Runs > 0 {
		g.PassRate = float64(g.Passed) / float64(g.Runs)
		g.RootCauseRate = float64(hits) / float64(g.Runs)
		g.MeanTokens /= float64(g.Runs)
	}
	g.PassCI = wilson(g.Passed, g.Runs)
	g.RootCauseCI = wilson(hits, g.Runs)
	g.MeanSteps, g.StepsSD = meanSD(steps)
	g.MeanLatencyMS, g.LatencySD = meanSD(lat)
	return g
}

// wilson is the 95 % Wilson score interval of k successes in n trials:
// unlike the normal approximation it stays within [0, 1] and means
// something for the small n of a few repetitions.
func wilson(k, n int) [2]float64 {
	if n == 0 {
		return [2]float64{0, 0}
	}
	const z = 1.959964
	p := float64(k) / float64(n)
	nf := float64(n)
	den := 1 + z*z/nf
	mid := (p + z*z/(2*nf)) / den
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / den
	return [2]float64{math.Max(0, mid-half), math.Min(1, mid+half)}
}

func meanSD(xs []float64) (float64, float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	m := sum / float64(len(xs))
	if len(xs) == 1 {
		return m, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - m) * (x - m)
	}
	return m, math.Sqrt(ss / float64(len(xs)-1))
}
