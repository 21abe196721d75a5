package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// ratioTarget is one opsagent build set up for a ratio row.
type ratioTarget struct {
	b   build
	p   *proc
	hdr []string
}

func setupRatio(dir string, b build, nTasks int) (*ratioTarget, error) {
	p, err := startOpsagent(b.bin, filepath.Join(dir, "data-"+strings.ReplaceAll(b.name, " ", "-")))
	if err != nil {
		return nil, err
	}
	a, err := register(p, "", "bench@example.com", true)
	if err != nil {
		p.stop()
		return nil, err
	}
	c := client("")
	for i := 1; i < nTasks; i++ { // the bootstrap made one
		if _, err := call(c, "POST", p.url("/api/tasks"), a.access, a.project, map[string]any{
			"name": fmt.Sprintf("check disk %d", i), "prompt": "Check the disks of the production hosts and report any above 80%.",
			"description": "benchmark task", "schedule": "@daily"}, nil); err != nil {
			p.stop()
			return nil, err
		}
	}
	return &ratioTarget{b: b, p: p, hdr: []string{"-H", "Authorization: Bearer " + a.access, "-H", "X-Project-ID: " + a.project}}, nil
}

// rowRatio alternates wrk on path between each opsagent build
// (authenticated, in the bootstrapped project, with nTasks tasks) and the
// bare server, round after round, rotating who goes first.
func rowRatio(dir, what, path string, conns int, goal float64, nTasks int) (string, error) {
	bare, err := startBare(*bareBin)
	if err != nil {
		return "", err
	}
	defer bare.stop()
	var ts []*ratioTarget
	for _, b := range builds() {
		t, err := setupRatio(dir, b, nTasks)
		if err != nil {
			return "", err
		}
		defer t.p.stop()
		if _, err := runWrk(nil, t.p.url(path), conns, 1, t.hdr...); err != nil { // warm-up
			return "", err
		}
		ts = append(ts, t)
	}
	ratios := map[string][]float64{}
	cpuRatios := map[string][]float64{}
	p99s := map[string][]float64{}
	lines := map[string][]string{}
	for r := 0; r < *rounds; r++ {
		// One round: every opsagent build and the bare server, the order rotated.
		res := map[string]wrkResult{}
		n := len(ts) + 1
		for k := 0; k < n; k++ {
			i := (k + r) % n
			var out wrkResult
			var err error
			if i == len(ts) {
				out, err = runWrk(bare, bare.url(path), conns, *secs)
				res["bare"] = out
			} else {
				out, err = runWrk(ts[i].p, ts[i].p.url(path), conns, *secs, ts[i].hdr...)
				if err == nil && out.non2xx > 0 {
					err = fmt.Errorf("%s answered %v non-2xx", ts[i].b.name, out.non2xx)
				}
				res[ts[i].b.name] = out
			}
			if err != nil {
				return "", err
			}
		}
		w := res["bare"]
		for _, t := range ts {
			o := res[t.b.name]
			ratios[t.b.name] = append(ratios[t.b.name], o.rps/w.rps)
			if o.cpuUS > 0 {
				cpuRatios[t.b.name] = append(cpuRatios[t.b.name], w.cpuUS/o.cpuUS)
			}
			p99s[t.b.name] = append(p99s[t.b.name], float64(o.p99))
			lines[t.b.name] = append(lines[t.b.name], fmt.Sprintf("%.2f (%.0f vs %.0f/s, p99 %s)", o.rps/w.rps, o.rps, w.rps, fmtDur(o.p99)))
			fmt.Printf("  %s round %d, %s: %s | bare %s | ratio %.2f\n", path, r+1, t.b.name, o, w, o.rps/w.rps)
		}
	}
	var parts []string
	for _, t := range ts {
		parts = append(parts, fmt.Sprintf("%s: ratio %.2f median (%s), p99 %s, CPU per request bare/opsagent %.2f", t.b.name,
			median(ratios[t.b.name]), strings.Join(lines[t.b.name], "; "), fmtDur(time.Duration(median(p99s[t.b.name]))), median(cpuRatios[t.b.name])))
	}
	verdict := "meets"
	if median(ratios["this build"]) < goal {
		verdict = "SHORT"
	}
	return fmt.Sprintf("| %s (21) | `.ci/bench.sh %s` | %s; %s; load %s | >= %.2fx |",
		what, rowName(path), strings.Join(parts, " / "), verdict, loadavg(), goal), nil
}

func rowName(path string) string {
	if strings.HasPrefix(path, "/api/tasks") {
		return "tasks"
	}
	return "me"
}
