package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Issue 36's change feed row: 100k changes in one project, seeded through
// the product's own bulk path (generic webhooks in the change shape, their
// routing rule matching nothing so no run starts), then this process's
// clients on GET /api/changes with the usual filters, alternated filter by
// filter with the bare httprouter server (the machine's floor for one
// request from these clients).
var (
	nChanges    = flag.Int("changes", 100000, "changes to seed in the project")
	changeConns = flag.String("changes-conns", "1,16", "concurrent clients of the list load, one load per level (comma-separated)")
)

const changeServices = 50

func seedChanges(p *proc, a *account, n int) (time.Duration, error) {
	c := client("")
	// Two webhooks: each takes at most 100,000 deliveries a minute.
	var hooks []struct{ path, secret string }
	for i := 0; i < 2; i++ {
		var task struct {
			ID string `json:"id"`
		}
		if _, err := call(c, "POST", p.url("/api/tasks"), a.access, a.project, map[string]any{"name": fmt.Sprintf("ci changes %d", i), "prompt": "Not run."}, &task); err != nil {
			return 0, err
		}
		var h struct {
			URL    string `json:"url"`
			Secret string `json:"secret"`
		}
		if _, err := call(c, "PUT", p.url("/api/tasks/"+task.ID+"/webhook"), a.access, a.project, map[string]any{
			"provider": "generic", "scheme": "bearer", "rate_limit_per_minute": 100000}, &h); err != nil {
			return 0, err
		}
		if _, err := call(c, "POST", p.url("/api/tasks/"+task.ID+"/webhook/rules"), a.access, a.project, map[string]any{
			"name": "changes only", "condition": "false"}, nil); err != nil {
			return 0, err
		}
		hooks = append(hooks, struct{ path, secret string }{h.URL, h.Secret})
	}
	start := time.Now()
	var next atomic.Int64
	var firstErr error
	var mu sync.Mutex
	var wg sync.WaitGroup
	now := time.Now().UTC()
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := client("")
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				// Spread over the last 80 days (retention keeps 90), newest last.
				at := now.Add(-time.Duration(n-i) * 80 * 24 * time.Hour / time.Duration(n))
				svc := fmt.Sprintf("svc-%d", i%changeServices)
				ch := map[string]any{"title": fmt.Sprintf("deploy %s build %d", svc, i), "kind": "deploy", "service": svc, "environment": "production",
					"labels": map[string]string{"team": []string{"payments", "search", "core", "edge"}[i%4], "region": []string{"eu", "us"}[i%2]},
					"author": "ci@example.com", "occurred_at": at.Format(time.RFC3339), "external_id": fmt.Sprintf("build-%d", i)}
				b, _ := json.Marshal(map[string]any{"change": ch})
				h := hooks[i%len(hooks)]
				for {
					code, err := callRaw(hc, p.url(h.path), h.secret, b)
					if code == 429 {
						time.Sleep(200 * time.Millisecond)
						continue
					}
					if err != nil {
						mu.Lock()
						if firstErr == nil {
							firstErr = err
						}
						mu.Unlock()
						return
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return 0, firstErr
	}
	// The receive handler records the change before it answers: the n-th
	// change is there and no (n+1)-th (the total may stop counting at a cap).
	for _, at := range []int{n - 1, n} {
		var page struct {
			Items []any `json:"items"`
		}
		if _, err := call(c, "GET", p.url(fmt.Sprintf("/api/changes?limit=1&offset=%d", at)), a.access, a.project, nil, &page); err != nil {
			return 0, err
		}
		if want := min(1, n-at); len(page.Items) != want {
			return 0, fmt.Errorf("seeded %d changes: %d at offset %d, want %d", n, len(page.Items), at, want)
		}
	}
	return time.Since(start), nil
}

// callRaw posts body with a bearer token; the status, and an error for
// anything but 2xx and 429.
func callRaw(c *http.Client, u, secret string, body []byte) (int, error) {
	req, _ := http.NewRequestWithContext(context.Background(), "POST", u, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+secret)
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 && resp.StatusCode != 429 {
		return resp.StatusCode, fmt.Errorf("POST %s: %d %s", u, resp.StatusCode, b)
	}
	return resp.StatusCode, nil
}

// listLoad is one load run: rate, latency percentiles, server CPU per request.
type listLoad struct {
	n      int
	rps    float64
	p50    time.Duration
	p99    time.Duration
	cpuUS  float64
	errors int
}

func (r listLoad) String() string {
	s := fmt.Sprintf("%.0f/s p50 %s p99 %s", r.rps, fmtDur(r.p50), fmtDur(r.p99))
	if r.cpuUS > 0 {
		s += fmt.Sprintf(" %.0fµs CPU/req", r.cpuUS)
	}
	if r.errors > 0 {
		s += fmt.Sprintf(" errors %d", r.errors)
	}
	return s
}

// loadGET runs conns clients on u for secs, each sending the next request
// when the previous answered (wrk's closed loop).
func loadGET(p *proc, u string, hdr map[string]string, conns, secs int) listLoad {
	var mu sync.Mutex
	var lat []time.Duration
	errs := 0
	c0 := p.cpuSeconds()
	start := time.Now()
	end := start.Add(time.Duration(secs) * time.Second)
	var wg sync.WaitGroup
	for i := 0; i < conns; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			hc := client("")
			var mine []time.Duration
			bad := 0
			for time.Now().Before(end) {
				req, _ := http.NewRequest("GET", u, nil)
				for k, v := range hdr {
					req.Header.Set(k, v)
				}
				t0 := time.Now()
				resp, err := hc.Do(req)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
					if resp.StatusCode != 200 {
						bad++
					}
				} else {
					bad++
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat, errs = append(lat, mine...), errs+bad
			mu.Unlock()
		}()
	}
	wg.Wait()
	el := time.Since(start)
	r := listLoad{n: len(lat), rps: float64(len(lat)) / el.Seconds(), p50: pct(lat, 0.5), p99: pct(lat, 0.99), errors: errs}
	if len(lat) > 0 {
		r.cpuUS = (p.cpuSeconds() - c0) * 1e6 / float64(len(lat))
	}
	return r
}

func rowChanges(dir string) (string, error) {
	bare, err := startBare(*bareBin)
	if err != nil {
		return "", err
	}
	defer bare.stop()
	type target struct {
		b    build
		p    *proc
		a    *account
		seed time.Duration
	}
	// Seeded once, by the last build (the baseline when there is one), then
	// each build serves its own copy of that data directory: a later build
	// meets the feed as an upgrade does, its migrations run on start.
	bs := builds()
	seedDir := filepath.Join(dir, "data-seed")
	sp, err := startOpsagent(bs[len(bs)-1].bin, seedDir)
	if err != nil {
		return "", err
	}
	a, err := register(sp, "", "bench@example.com", true)
	if err != nil {
		sp.stop()
		return "", err
	}
	d, err := seedChanges(sp, a, *nChanges)
	sp.stop()
	if err != nil {
		return "", err
	}
	fmt.Printf("  seeded %d changes in %s (%.0f/s) with %s\n", *nChanges, d.Round(time.Millisecond), float64(*nChanges)/d.Seconds(), bs[len(bs)-1].name)
	var ts []target
	for _, b := range bs {
		bd := filepath.Join(dir, "data-"+strings.ReplaceAll(b.name, " ", "-"))
		if out, err := exec.Command("cp", "-a", seedDir, bd).CombinedOutput(); err != nil {
			return "", fmt.Errorf("copy the seeded data: %v %s", err, out)
		}
		p, err := startOpsagent(b.bin, bd)
		if err != nil {
			return "", err
		}
		defer p.stop()
		ts = append(ts, target{b, p, a, d})
	}
	now := time.Now().UTC()
	q := func(kv ...string) string {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Add(kv[i], kv[i+1])
		}
		if len(v) == 0 {
			return "/api/changes"
		}
		return "/api/changes?" + v.Encode()
	}
	filters := []struct{ name, path string }{
		{"newest 50", q()},
		{"the hour before an incident", q("since", now.Add(-time.Hour).Format(time.RFC3339), "until", now.Format(time.RFC3339))},
		{"service", q("service", "svc-7")},
		{"label", q("label", "team=payments")},
		{"service + source + 7 days", q("service", "svc-7", "source", "generic", "since", now.Add(-7*24*time.Hour).Format(time.RFC3339))},
		{"page 20 of a service", q("service", "svc-7", "offset", "1000")},
	}
	var levels []int
	for _, l := range strings.Split(*changeConns, ",") {
		var n int
		if _, err := fmt.Sscan(strings.TrimSpace(l), &n); err != nil || n < 1 {
			return "", fmt.Errorf("-changes-conns: %q is not a number of clients", l)
		}
		levels = append(levels, n)
	}
	var parts []string
	worst := map[int]time.Duration{} // this build's worst p99 per level
	for _, f := range filters {
		for _, conns := range levels {
			line := fmt.Sprintf("%s, %d client(s): ", f.name, conns)
			var segs []string
			for r := 0; r < *rounds; r++ {
				for _, t := range ts {
					res := loadGET(t.p, t.p.url(f.path), map[string]string{"Authorization": "Bearer " + t.a.access, "X-Project-ID": t.a.project}, conns, *secs)
					fl := loadGET(bare, bare.url("/healthz"), nil, conns, *secs)
					fmt.Printf("  %s, %d clients, round %d, %s: %s | bare %s | load %s\n", f.name, conns, r+1, t.b.name, res, fl, loadavg())
					segs = append(segs, fmt.Sprintf("%s %s (bare p99 %s)", t.b.name, res, fmtDur(fl.p99)))
					if t.b.name == "this build" && res.p99 > worst[conns] {
						worst[conns] = res.p99
					}
					if res.errors > 0 {
						return "", fmt.Errorf("%s: %d non-200 answers on %s", t.b.name, res.errors, f.path)
					}
				}
			}
			parts = append(parts, line+strings.Join(segs, "; "))
		}
	}
	var verdicts []string
	for _, conns := range levels {
		v := "meets"
		if worst[conns] > 20*time.Millisecond {
			v = "SHORT"
		}
		verdicts = append(verdicts, fmt.Sprintf("%d client(s): worst p99 %s (%s)", conns, fmtDur(worst[conns]), v))
	}
	verdict := strings.Join(verdicts, ", ")
	var seeds []string
	for _, t := range ts {
		seeds = append(seeds, fmt.Sprintf("%s seeded in %s", t.b.name, t.seed.Round(time.Second)))
	}
	return fmt.Sprintf("| `GET /api/changes` with %d changes in the project, clients from this process (%s), each filter %d x %d s alternated with bare (36) | `.ci/bench.sh changes` | %s; %s; %s; load %s | p99 <= 20 ms |",
		*nChanges, *changeConns, *rounds, *secs, strings.Join(parts, " / "), verdict, strings.Join(seeds, ", "), loadavg()), nil
}
