package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ingestHooks is how many webhooks the load is spread over: one webhook's
// own rate limit is at most 100,000/min (about 1,667/s), so 10k/s needs
// several; 16 keep the limit out of the measurement.
const ingestHooks = 16

// ingestLua posts distinct Alertmanager groups (thread id and a counter in
// every body, so nothing is deduplicated and every delivery is a durable
// insert with the 60 s dedupe window on) round-robin over the webhooks.
func ingestLua(paths, secrets []string) string {
	var hooks []string
	for i := range paths {
		hooks = append(hooks, fmt.Sprintf("{%q, %q}", paths[i], "Bearer "+secrets[i]))
	}
	return `local hooks = {` + strings.Join(hooks, ", ") + `}
local threads = 0
function setup(thread) thread:set("tid", threads); threads = threads + 1 end
local n = 0
local run = "r"
-- Each wrk run gets its own label (script argument): the runs of a row would
-- otherwise send the same bodies again, which the 60 s dedupe window answers
-- as duplicates, far cheaper than new alerts.
function init(args) run = args[1] or "r" end
request = function()
  n = n + 1
  local h = hooks[(n % #hooks) + 1]
  local id = run .. "-" .. tid .. "-" .. n
  local body = '{"version":"4","groupKey":"{}:{alertname=\\"Disk' .. id .. '\\"}","status":"firing","receiver":"opsagent",' ..
    '"groupLabels":{"alertname":"Disk' .. id .. '"},"commonLabels":{"alertname":"Disk' .. id .. '","severity":"warning"},' ..
    '"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"firing","labels":{"alertname":"Disk' .. id ..
    '","instance":"db-' .. id .. '"},"annotations":{"summary":"disk filling"},"startsAt":"2026-11-23T10:00:00Z",' ..
    '"endsAt":"0001-01-01T00:00:00Z","fingerprint":"' .. id .. '"}]}'
  return wrk.format("POST", h[1], {["Authorization"] = h[2], ["Content-Type"] = "application/json"}, body)
end
`
}

// ingestTarget is one server under ingest load: its wrk script and what
// the drain check needs (the account and the webhooks' tasks).
type ingestTarget struct {
	script string
	acct   *account
	tasks  []string
}

// pending counts the events acknowledged but not yet dispatched (status
// received) over the webhooks.
func (it *ingestTarget) pending(p *proc) (int, error) {
	c := client("")
	n := 0
	for _, task := range it.tasks {
		var page struct {
			Total int `json:"total"`
		}
		if _, err := call(c, "GET", p.url("/api/tasks/"+task+"/webhook/events?status=received&limit=1"), it.acct.access, it.acct.project, nil, &page); err != nil {
			return 0, err
		}
		n += page.Total
	}
	return n, nil
}

// setupIngest makes 16 tasks with Alertmanager webhooks (default settings
// but the per-webhook rate limit at its maximum) and writes the wrk script.
func setupIngest(p *proc, dir string) (*ingestTarget, error) {
	a, err := register(p, "", "bench@example.com", true)
	if err != nil {
		return nil, err
	}
	it := &ingestTarget{acct: a}
	c := client("")
	var paths, secrets []string
	for i := 0; i < ingestHooks; i++ {
		var task struct {
			ID string `json:"id"`
		}
		if _, err := call(c, "POST", p.url("/api/tasks"), a.access, a.project, map[string]any{
			"name": fmt.Sprintf("disk alerts %d", i), "prompt": "Investigate the disk alert."}, &task); err != nil {
			return nil, err
		}
		it.tasks = append(it.tasks, task.ID)
		var hook struct {
			URL    string `json:"url"`
			Secret string `json:"secret"`
		}
		if _, err := call(c, "PUT", p.url("/api/tasks/"+task.ID+"/webhook"), a.access, a.project, map[string]any{
			"provider": "alertmanager", "rate_limit_per_minute": 100000}, &hook); err != nil {
			return nil, err
		}
		paths, secrets = append(paths, hook.URL), append(secrets, hook.Secret)
	}
	it.script = filepath.Join(dir, filepath.Base(p.dataDir)+".lua")
	return it, os.WriteFile(it.script, []byte(ingestLua(paths, secrets)), 0o600)
}

// rowIngest: consecutive runs at 256 connections (flat?), then one at 64
// connections for the p99, per build.
func rowIngest(dir string) (string, error) {
	type target struct {
		b      build
		p      *proc
		script string
		it     *ingestTarget
		cpu0   float64 // CPU seconds before the first run
		events float64 // deliveries answered
	}
	var ts []target
	for _, b := range builds() {
		p, err := startOpsagent(b.bin, filepath.Join(dir, "data-"+strings.ReplaceAll(b.name, " ", "-")))
		if err != nil {
			return "", err
		}
		defer p.stop()
		it, err := setupIngest(p, dir)
		if err != nil {
			return "", err
		}
		ts = append(ts, target{b: b, p: p, script: it.script, it: it, cpu0: p.cpuSeconds()})
	}
	lines := map[string][]string{}
	rates := map[string][]float64{}
	cpus := map[string][]float64{} // CPU µs per request, run by run
	p99s := map[string]time.Duration{}
	floor, err := startFloor(dir)
	if err != nil {
		return "", err
	}
	if floor != nil {
		defer floor.p.stop()
	}
	for r := 0; r < *ingRuns; r++ {
		if floor != nil {
			line, rps, err := floor.run(256, *ingSecs)
			if err != nil {
				return "", err
			}
			lines[floorName] = append(lines[floorName], line)
			rates[floorName] = append(rates[floorName], rps)
		}
		for k := range ts {
			t := &ts[(k+r)%len(ts)]
			res, err := runWrk(t.p, "http://"+t.p.addr, 256, *ingSecs, "-s", t.script, "--", nextRunLabel())
			if err != nil {
				return "", err
			}
			t.events += res.requests - res.non2xx
			rates[t.b.name] = append(rates[t.b.name], res.rps)
			cpus[t.b.name] = append(cpus[t.b.name], res.cpuUS)
			lines[t.b.name] = append(lines[t.b.name], fmt.Sprintf("%.0f/s (p99 %s)", res.rps, fmtDur(res.p99)))
			fmt.Printf("  ingest run %d at 256 connections, %s: %s\n", r+1, t.b.name, res)
		}
	}
	if floor != nil {
		line, _, err := floor.run(64, min(*ingSecs, 10))
		if err != nil {
			return "", err
		}
		lines[floorName] = append(lines[floorName], "64 connections: "+line)
	}
	for k := range ts {
		t := &ts[k]
		res, err := runWrk(t.p, "http://"+t.p.addr, 64, min(*ingSecs, 10), "-s", t.script, "--", nextRunLabel())
		if err != nil {
			return "", err
		}
		t.events += res.requests - res.non2xx
		p99s[t.b.name] = res.p99
		lines[t.b.name] = append(lines[t.b.name], fmt.Sprintf("64 connections: %.0f/s p99 %s", res.rps, fmtDur(res.p99)))
		fmt.Printf("  ingest at 64 connections, %s: %s\n", t.b.name, res)
	}
	// Events acknowledged under load may still wait for their dispatch
	// (a run, an incident): wait until none does, so the CPU per event
	// below is the whole cost of an event, acknowledgement and dispatch.
	for _, t := range ts {
		start := time.Now()
		left := -1
		for time.Since(start) < 5*time.Minute {
			n, err := t.it.pending(t.p)
			if err != nil {
				return "", err
			}
			if left = n; n == 0 {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		cpu := (t.p.cpuSeconds() - t.cpu0) * 1e6 / t.events
		line := fmt.Sprintf("all dispatched %.1f s after the load (%d left), %.0f µs CPU per event in all", time.Since(start).Seconds(), left, cpu)
		lines[t.b.name] = append(lines[t.b.name], line)
		fmt.Printf("  ingest drain, %s: %s\n", t.b.name, line)
	}
	mine := rates["this build"]
	lo, hi := minOf(mine), maxOf(mine)
	got := describe(lines)
	if l := lines[floorName]; len(l) > 0 {
		got += " | " + floorName + ": " + strings.Join(l, "; ")
	}
	verdict, trend := ingestVerdict(mine, cpus["this build"], rates[floorName], p99s["this build"])
	if trend != "" {
		fmt.Printf("  ingest%s\n", trend)
	}
	return fmt.Sprintf("| durable webhook ingest, default settings (60 s dedupe on), built binary, wrk -t2 with distinct alert groups over %d webhooks (each at its maximum 100,000/min), %d x %d s at 256 connections then 64 (21) | `.ci/bench.sh ingest` | %s; spread %.0f%%%s, %s; load %s | >= 10k/s flat within 10 %%, p99 <= 25 ms at 64 |",
		ingestHooks, *ingRuns, *ingSecs, got, (hi-lo)/hi*100, trend, verdict, loadavg()), nil
}

// ingestVerdict judges the row. "Sustained for 5 minutes, flat within
// 10 %" asks that the server not slow down as it receives (the issue found
// 1,160 events/s falling to 184 within 30 s). Over the sustained figure
// (five runs or more) that is read from the runs' fitted line: its end
// within 10 % of its start, for the rate and for the server's own CPU per
// event; and "10k events/s sustained" is the mean over the whole window
// (the events it took, divided by the time). A single run's min/max is
// not the test there: on these shared VMs the floor's own runs spread
// 13-45 % with no slowdown of its own, and its CPU per request moves with
// ours run by run. Both spreads are printed beside the verdict. Three
// short runs carry no trend, so they are judged strictly: every run at
// 10k/s or more, and within 10 % of each other.
func ingestVerdict(mine, cpu, floor []float64, p99 time.Duration) (verdict, trend string) {
	verdict = "meets"
	if p99 > 25*time.Millisecond {
		verdict = "SHORT"
	}
	if len(mine) < 5 {
		if minOf(mine) < 10000 || spread(mine) > 10 {
			verdict = "SHORT"
		}
		return verdict, ""
	}
	mins := float64(len(mine)**ingSecs) / 60
	rateSlope := slopePerMinute(mine, *ingSecs)
	trend = fmt.Sprintf("; mean %.0f/s, trend %+.1f %% per minute (least squares over the runs: %+.1f %% over the %.0f minutes)",
		mean(mine), rateSlope, rateSlope*mins, mins)
	if mean(mine) < 10000 || rateSlope*mins < -10 {
		verdict = "SHORT"
	}
	// The server's own work per event, run by run: a server that slows
	// down as it fills spends more CPU per event, whatever the machine's
	// other load does to its throughput.
	if len(cpu) == len(mine) && cpu[0] > 0 {
		cpuSlope := slopePerMinute(cpu, *ingSecs)
		trend += fmt.Sprintf(", CPU per event %.0f-%.0f µs, trend %+.1f %% per minute (%+.1f %% over the window)", minOf(cpu), maxOf(cpu), cpuSlope, cpuSlope*mins)
		if cpuSlope*mins > 10 {
			verdict = "SHORT"
		}
	}
	trend += fmt.Sprintf(", raw spread %.0f %%", spread(mine))
	if len(floor) == len(mine) {
		rel := make([]float64, len(mine))
		for i := range mine {
			rel[i] = mine[i] / floor[i]
		}
		trend += fmt.Sprintf(" (the floor's own %.0f %%; each run over the floor's run before it %.0f %%)", spread(floor), spread(rel))
	}
	return verdict, trend
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func minOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = min(m, x)
	}
	return m
}

func maxOf(xs []float64) float64 {
	m := xs[0]
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// spread is (max - min) / max in percent.
func spread(xs []float64) float64 {
	lo, hi := xs[0], xs[0]
	for _, x := range xs {
		lo, hi = min(lo, x), max(hi, x)
	}
	return (hi - lo) / hi * 100
}

// slopePerMinute fits rate = a + b*t over consecutive runs of secs each and
// returns b per minute as a percentage of the mean rate.
func slopePerMinute(rates []float64, secs int) float64 {
	n := float64(len(rates))
	var st, sr, stt, str float64
	for i, r := range rates {
		t := float64(i*secs) / 60
		st, sr, stt, str = st+t, sr+r, stt+t*t, str+t*r
	}
	b := (n*str - st*sr) / (n*stt - st*st)
	return b / (sr / n) * 100
}

// runLabels numbers the ingest's wrk runs, so no run repeats another's bodies.
var runLabels int

func nextRunLabel() string { runLabels++; return fmt.Sprintf("run%d", runLabels) }
