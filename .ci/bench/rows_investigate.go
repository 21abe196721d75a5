package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Issue 36's two evidence rows, on the built binary with default settings
// (only --llm-* pointing at this process's model):
//
//   - gathering: the start of an alert-triggered run, from the Alertmanager
//     delivery sent to the model's first request, for an alert that opens an
//     incident in a project with Prometheus, Loki, Alertmanager and Grafana
//     answering at once ("gather"), against the same alert on a webhook with
//     correlate off, which opens no incident and so gathers nothing
//     ("baseline"), and an incident in a project with no integrations
//     ("internal": alert, timeline, knowledge, past incidents, changes only).
//     The three alternate, one delivery at a time.
//   - hanging: the same with Grafana never answering ("hang"), alternated
//     with the baseline: the run should start at the source's budget (3 s by
//     default) plus at most 100 ms.
var (
	evRuns   = flag.Int("evidence-runs", 100, "alert runs per variant of the gathering row")
	hangRuns = flag.Int("hang-runs", 12, "alert runs of the hanging row (each waits out the source's budget)")
)

// evVariant is one webhook whose alerts start runs.
type evVariant struct {
	name, project, hookPath, secret string
	lat                             []time.Duration
	timeouts                        int
}

type evTarget struct {
	b    build
	p    *proc
	llm  *fakeLLM
	acct *account
	vs   map[string]*evVariant
	seq  int
}

func setupEvidence(dir string, b build) (*evTarget, error) {
	llm, err := newFakeLLM()
	if err != nil {
		return nil, err
	}
	p, err := startOpsagent(b.bin, filepath.Join(dir, "data-"+strings.ReplaceAll(b.name, " ", "-")),
		"--llm-provider", "openai", "--llm-base-url", llm.url+"/v1", "--llm-model", "bench", "--llm-api-key", "bench")
	if err != nil {
		return nil, err
	}
	t := &evTarget{b: b, p: p, llm: llm, vs: map[string]*evVariant{}}
	fail := func(err error) (*evTarget, error) { p.stop(); return nil, err }
	a, err := register(p, "", "bench@example.com", true)
	if err != nil {
		return fail(err)
	}
	t.acct = a
	c := client("")
	project := func(name string) (string, error) {
		var out struct {
			ID string `json:"id"`
		}
		_, err := call(c, "POST", p.url("/api/projects"), a.access, "", map[string]any{"name": name}, &out)
		return out.ID, err
	}
	integrations := func(proj, hang string) error {
		urls, err := sourceFakes(hang)
		if err != nil {
			return err
		}
		for kind, u := range urls {
			if _, err := call(c, "POST", p.url("/api/integrations"), a.access, proj, map[string]any{"kind": kind, "name": kind + "-main", "base_url": u}, nil); err != nil {
				return err
			}
		}
		return nil
	}
	hook := func(name, proj string, correlate bool) error {
		var task struct {
			ID string `json:"id"`
		}
		if _, err := call(c, "POST", p.url("/api/tasks"), a.access, proj, map[string]any{"name": "on alert " + name, "prompt": "Investigate the alert."}, &task); err != nil {
			return err
		}
		var h struct {
			URL    string `json:"url"`
			Secret string `json:"secret"`
		}
		if _, err := call(c, "PUT", p.url("/api/tasks/"+task.ID+"/webhook"), a.access, proj, map[string]any{"provider": "alertmanager", "correlate": correlate}, &h); err != nil {
			return err
		}
		t.vs[name] = &evVariant{name: name, project: proj, hookPath: h.URL, secret: h.Secret}
		return nil
	}
	none, err := project("no integrations")
	if err != nil {
		return fail(err)
	}
	hanging, err := project("grafana hangs")
	if err != nil {
		return fail(err)
	}
	for _, step := range []func() error{
		func() error { return integrations(a.project, "") },
		func() error { return integrations(hanging, "grafana") },
		func() error { return hook("gather", a.project, true) },
		func() error { return hook("baseline", a.project, false) },
		func() error { return hook("internal", none, true) },
		func() error { return hook("hang", hanging, true) },
	} {
		if err := step(); err != nil {
			return fail(err)
		}
	}
	return t, nil
}

// alertBody is an Alertmanager delivery of one distinct alert carrying marker.
func alertBody(marker string) []byte {
	return []byte(`{"version":"4","groupKey":"` + marker + `","status":"firing","receiver":"opsagent",
		"groupLabels":{"alertname":"HighLatency"},"commonLabels":{"alertname":"HighLatency","severity":"critical","service":"api"},
		"commonAnnotations":{"summary":"p99 above 2s ` + marker + `"},"externalURL":"http://am:9093","alerts":[{"status":"firing",
		"labels":{"alertname":"HighLatency","severity":"critical","service":"api","run":"` + marker + `"},
		"annotations":{"summary":"p99 above 2s ` + marker + `"},"startsAt":"` + time.Now().UTC().Format(time.RFC3339) + `",
		"endsAt":"0001-01-01T00:00:00Z","generatorURL":"http://prom:9090/graph?g0.expr=http_request_duration_p99%7Bservice%3D%22api%22%7D+%3E+2","fingerprint":"` + marker + `"}]}`)
}

// sample sends one alert to v and waits for its run's first model request.
func (t *evTarget) sample(v *evVariant) error {
	t.seq++
	marker := fmt.Sprintf("benchrun-%s-%06d-x", v.name, t.seq)
	arrived := t.llm.expect(marker)
	c := client("")
	t0 := time.Now()
	req := alertBody(marker)
	if _, err := callRaw(c, t.p.url(v.hookPath), v.secret, req); err != nil {
		return err
	}
	select {
	case at := <-arrived:
		v.lat = append(v.lat, at.Sub(t0))
	case <-time.After(15 * time.Second):
		v.timeouts++
	}
	// Let the run write its end before the next delivery.
	time.Sleep(150 * time.Millisecond)
	return nil
}

func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s))*p+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

func (v *evVariant) String() string {
	s := fmt.Sprintf("%s: n=%d p50 %s p99 %s max %s", v.name, len(v.lat), fmtDur(pct(v.lat, 0.5)), fmtDur(pct(v.lat, 0.99)), fmtDur(pct(v.lat, 1)))
	if v.timeouts > 0 {
		s += fmt.Sprintf(" (%d never reached the model)", v.timeouts)
	}
	return s
}

// rowEvidence runs both rows for every build.
func rowEvidence(dir string) (string, error) {
	var ts []*evTarget
	for _, b := range builds() {
		t, err := setupEvidence(dir, b)
		if err != nil {
			return "", err
		}
		defer t.p.stop()
		ts = append(ts, t)
	}
	order := []string{"gather", "baseline", "internal"}
	for _, t := range ts { // warm-up: one of each, not counted
		for _, n := range order {
			if err := t.sample(t.vs[n]); err != nil {
				return "", err
			}
			t.vs[n].lat, t.vs[n].timeouts = nil, 0
		}
	}
	for i := 0; i < *evRuns; i++ {
		for _, t := range ts {
			for k := range order {
				if err := t.sample(t.vs[order[(k+i)%len(order)]]); err != nil {
					return "", err
				}
			}
		}
	}
	for i := 0; i < *hangRuns; i++ {
		for _, t := range ts {
			for _, n := range []string{"hang", "baseline"} {
				if err := t.sample(t.vs[n]); err != nil {
					return "", err
				}
			}
		}
	}
	var rows []string
	for _, t := range ts {
		g, base, in, h := t.vs["gather"], t.vs["baseline"], t.vs["internal"], t.vs["hang"]
		// The pack the gather and hang runs' first requests held.
		check := "pack checked"
		gb, hb := t.llm.body(fmt.Sprintf("benchrun-gather-%06d-x", lastSeq(t, "gather"))), ""
		for s := t.seq; s > 0 && hb == ""; s-- {
			hb = t.llm.body(fmt.Sprintf("benchrun-hang-%06d-x", s))
		}
		for _, w := range []string{"EVIDENCE", "Prometheus series", "Loki log lines", "deploy api v2.0", "maintenance of db-2"} {
			if !strings.Contains(gb, w) {
				check = "the gather run's pack lacks " + w
			}
		}
		if !strings.Contains(hb, "grafana: timed out after 3s") {
			check += "; the hang run's pack does not name grafana as timed out"
		}
		d99 := pct(g.lat, 0.99) - pct(base.lat, 0.99)
		fmt.Printf("  %s: %s | %s | %s | %s | %s\n", t.b.name, g, base, in, h, check)
		rows = append(rows,
			fmt.Sprintf("| gathering's cost at the start of an alert-triggered run, 4 loopback integrations answering at once, vs the same alert with correlate off (no incident, no gathering), built binary, alternated (36) | `.ci/bench.sh evidence` | %s: %s; %s; %s; **p99 +%s** (p50 +%s); %s; load %s | <= +50 ms p99 |",
				t.b.name, g, base, in, fmtDur(d99), fmtDur(pct(g.lat, 0.5)-pct(base.lat, 0.5)), check, loadavg()),
			fmt.Sprintf("| run start with Grafana hanging (3 s default budget), alternated with the baseline (36) | `.ci/bench.sh evidence` | %s: %s; baseline p99 %s; **start - budget: p50 %s, p99 %s** over the baseline's p50 | <= budget + 100 ms |",
				t.b.name, h, fmtDur(pct(base.lat, 0.99)), fmtDur(pct(h.lat, 0.5)-3*time.Second-pct(base.lat, 0.5)), fmtDur(pct(h.lat, 0.99)-3*time.Second-pct(base.lat, 0.5))))
	}
	return strings.Join(rows, "\n"), nil
}

// lastSeq is the sequence number of the last sample of variant name (the
// markers carry the target's running count).
func lastSeq(t *evTarget, name string) int {
	for s := t.seq; s > 0; s-- {
		if t.llm.body(fmt.Sprintf("benchrun-%s-%06d-x", name, s)) != "" {
			return s
		}
	}
	return 0
}
