package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"
)

// rowRatio alternates wrk on path between opsagent (authenticated, in the
// bootstrapped project, with nTasks tasks) and the bare server.
func rowRatio(dir, what, path string, conns int, goal float64, nTasks int) (string, error) {
	p, err := startOpsagent(*bin, filepath.Join(dir, "data"))
	if err != nil {
		return "", err
	}
	defer p.stop()
	b, err := startBare(*bareBin)
	if err != nil {
		return "", err
	}
	defer b.stop()
	a, err := register(p, "", "bench@example.com", true)
	if err != nil {
		return "", err
	}
	c := client("")
	for i := 1; i < nTasks; i++ { // the bootstrap made one
		if _, err := call(c, "POST", p.url("/api/tasks"), a.access, a.project, map[string]any{
			"name": fmt.Sprintf("check disk %d", i), "prompt": "Check the disks of the production hosts and report any above 80%.",
			"description": "benchmark task", "schedule": "@daily"}, nil); err != nil {
			return "", err
		}
	}
	hdr := []string{"-H", "Authorization: Bearer " + a.access, "-H", "X-Project-ID: " + a.project}
	if _, err := runWrk(nil, p.url(path), conns, 1, hdr...); err != nil { // warm-up
		return "", err
	}
	var ratios, p99s, cpuRatios []float64
	var roundsOut []string
	for r := 0; r < *rounds; r++ {
		var o, w wrkResult
		var err1, err2 error
		if r%2 == 0 {
			o, err1 = runWrk(p, p.url(path), conns, *secs, hdr...)
			w, err2 = runWrk(b, b.url(path), conns, *secs)
		} else {
			w, err2 = runWrk(b, b.url(path), conns, *secs)
			o, err1 = runWrk(p, p.url(path), conns, *secs, hdr...)
		}
		if err1 != nil || err2 != nil {
			return "", fmt.Errorf("%v %v", err1, err2)
		}
		if o.non2xx > 0 {
			return "", fmt.Errorf("opsagent answered %v non-2xx", o.non2xx)
		}
		ratios = append(ratios, o.rps/w.rps)
		if o.cpuUS > 0 {
			cpuRatios = append(cpuRatios, w.cpuUS/o.cpuUS)
		}
		p99s = append(p99s, float64(o.p99))
		line := fmt.Sprintf("opsagent %s | bare %s | ratio %.2f", o, w, o.rps/w.rps)
		fmt.Printf("  %s round %d: %s\n", path, r+1, line)
		roundsOut = append(roundsOut, fmt.Sprintf("%.0f vs %.0f/s", o.rps, w.rps))
	}
	m := median(ratios)
	verdict := "meets"
	if m < goal {
		verdict = "SHORT"
	}
	p99 := ""
	if nTasks > 0 {
		p99 = fmt.Sprintf(", p99 %s", fmtDur(time.Duration(median(p99s))))
	}
	return fmt.Sprintf("| %s (21) | `.ci/bench.sh %s` | ratio %.2f median of %d (%s)%s; server CPU per request bare/opsagent %.2f, %s; load %s | >= %.2fx |",
		what, rowName(path), m, len(ratios), strings.Join(roundsOut, "; "), p99, median(cpuRatios), verdict, loadavg(), goal), nil
}

func rowName(path string) string {
	if strings.HasPrefix(path, "/api/tasks") {
		return "tasks"
	}
	return "me"
}
