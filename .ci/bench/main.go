// Command bench reproduces the issue-21 rows of BENCHMARKS.md's summary
// table against the built binary, with wrk (or, where a request depends on
// the previous answer, this program's own clients) in a separate process and
// a bare httprouter server alternated in the same run. Run it through
// .ci/bench.sh, which builds the binaries:
//
//	.ci/bench.sh [-secs 5] [-rounds 3] [rows...]   rows: me tasks refresh login rss coldstart ingest
//	.ci/bench.sh evidence changes                   issue 36's rows (not in the default set)
//
// Every server runs with default settings; the few setup-only flags used
// (--signup open, so the load can register many accounts) are named in the
// row's output.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

var (
	bin      = flag.String("bin", "", "opsagent binary")
	bareBin  = flag.String("bare", "", "bare httprouter baseline binary")
	bareIng  = flag.String("bare-ingest", "", "optional floor of the ingest row: a bare durable receiver (.ci/bare-ingest), alternated with the builds")
	baseBin  = flag.String("base", "", "optional opsagent binary of an earlier revision, run alternated with -bin (before/after)")
	baseName = flag.String("base-name", "baseline", "what -base is called in the output")
	secs     = flag.Int("secs", 5, "seconds per wrk run")
	rounds   = flag.Int("rounds", 3, "alternated rounds per ratio row")
	ingSecs  = flag.Int("ingest-secs", 10, "seconds per ingest run (the issue asks 300 for the sustained figure)")
	ingRuns  = flag.Int("ingest-runs", 3, "consecutive ingest runs at 256 connections")
	work     = flag.String("work", "", "scratch directory (default: a new temp dir, removed at the end)")
	rowsDone []string
)

func main() {
	flag.Parse()
	rows := flag.Args()
	if len(rows) == 0 {
		rows = []string{"me", "tasks", "refresh", "login", "rss", "coldstart", "ingest"}
	}
	dir := *work
	if dir == "" {
		d, err := os.MkdirTemp("", "opsagent-bench-")
		if err != nil {
			fatal(err)
		}
		defer os.RemoveAll(d)
		dir = d
	}
	fmt.Printf("load average at start: %s\n", loadavg())
	for _, r := range rows {
		var line string
		var err error
		sub := filepath.Join(dir, r)
		_ = os.MkdirAll(sub, 0o700)
		switch r {
		case "me":
			line, err = rowRatio(sub, "authenticated `GET /api/auth/me` vs bare httprouter, wrk -t2 -c32", "/api/auth/me", 32, 0.35, 0)
		case "tasks":
			line, err = rowRatio(sub, "`GET /api/tasks?limit=50` (60 tasks) vs bare, wrk -t2 -c32", "/api/tasks?limit=50", 32, 0.20, 60)
		case "refresh":
			line, err = rowRefresh(sub)
		case "login":
			line, err = rowLogin(sub)
		case "rss":
			line, err = rowRSS(sub)
		case "coldstart":
			line, err = rowColdStart(sub)
		case "ingest":
			line, err = rowIngest(sub)
		case "evidence":
			line, err = rowEvidence(sub)
		case "changes":
			line, err = rowChanges(sub)
		default:
			err = fmt.Errorf("unknown row %q", r)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "row %s: %v\n", r, err)
			line = fmt.Sprintf("| %s | failed: %v | |", r, err)
		}
		rowsDone = append(rowsDone, line)
		fmt.Println(line)
	}
	fmt.Printf("load average at end: %s\n\nsummary rows:\n%s\n", loadavg(), strings.Join(rowsDone, "\n"))
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, err)
	os.Exit(1)
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	return s[len(s)/2]
}

type build struct{ name, bin string }

// builds is this build, then the baseline build when -base is given.
func builds() []build {
	out := []build{{"this build", *bin}}
	if *baseBin != "" {
		out = append(out, build{*baseName, *baseBin})
	}
	return out
}

// describe joins per-build readings: "this build: a; b | baseline: c; d".
func describe(lines map[string][]string) string {
	var parts []string
	for _, b := range builds() {
		if l := lines[b.name]; len(l) > 0 {
			parts = append(parts, b.name+": "+strings.Join(l, "; "))
		}
	}
	return strings.Join(parts, " / ")
}
