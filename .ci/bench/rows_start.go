package main

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// prepareIndex makes a data dir with one account and 10,000 documents of
// about 2 KB in its project's runbooks, and lets the server index them once.
func prepareIndex(dir string) (string, *account, error) {
	data := filepath.Join(dir, "data-index")
	oldest := builds()[len(builds())-1].bin // a newer build migrates its copy; an older one refuses a newer schema
	p, err := startOpsagent(oldest, data)
	if err != nil {
		return "", nil, err
	}
	a, err := register(p, "", "bench@example.com", true)
	p.stop()
	if err != nil {
		return "", nil, err
	}
	docs := filepath.Join(data, "rag", "docs", a.org, a.project, "runbooks")
	if err := os.MkdirAll(docs, 0o700); err != nil {
		return "", nil, err
	}
	para := strings.Repeat("Check the disk usage of the volume, rotate the logs, and page the on-call engineer when it stays above ninety percent. ", 16)
	for i := 0; i < 10000; i++ {
		body := fmt.Sprintf("# Runbook %d: service-%d\n\n%s\n", i, i, para[:1900])
		if err := os.WriteFile(filepath.Join(docs, fmt.Sprintf("runbook-%05d.md", i)), []byte(body), 0o600); err != nil {
			return "", nil, err
		}
	}
	p, err = startOpsagent(oldest, data)
	if err != nil {
		return "", nil, err
	}
	defer p.stop()
	if _, err := waitStatus(p, "/readyz", 200, 5*time.Minute); err != nil {
		return "", nil, fmt.Errorf("indexing 10k documents: %v", err)
	}
	return data, a, nil
}

// waitStatus polls path until it answers want; it returns the time from
// the process start.
func waitStatus(p *proc, path string, want int, limit time.Duration) (time.Duration, error) {
	c := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		resp, err := c.Get(p.url(path))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == want {
				return time.Since(p.started), nil
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	return 0, fmt.Errorf("%s did not answer %d within %s", path, want, limit)
}

var indexOnce struct {
	sync.Once
	data string
	a    *account
	err  error
}

// indexedDataDir is a copy of the prepared 10k-document data dir for build
// b, started once (not measured) so that it is migrated and indexed.
func indexedDataDir(dir string, b build) (string, *account, error) {
	indexOnce.Do(func() { indexOnce.data, indexOnce.a, indexOnce.err = prepareIndex(filepath.Dir(dir)) })
	if indexOnce.err != nil {
		return "", nil, indexOnce.err
	}
	data := filepath.Join(dir, "data-"+strings.ReplaceAll(b.name, " ", "-"))
	if _, err := os.Stat(data); err == nil {
		return data, indexOnce.a, nil
	}
	if out, err := exec.Command("cp", "-a", indexOnce.data, data).CombinedOutput(); err != nil {
		return "", nil, fmt.Errorf("cp: %v %s", err, out)
	}
	p, err := startOpsagent(b.bin, data)
	if err != nil {
		return "", nil, err
	}
	defer p.stop()
	if _, err := waitStatus(p, "/readyz", 200, 5*time.Minute); err != nil {
		return "", nil, err
	}
	return data, indexOnce.a, nil
}

// rowColdStart: start the built binary on a data dir with a 10k-document
// index; time to the first 200 (GET /healthz; the start time includes the
// process exec and the "listening" line) and to /readyz 200 (index loaded).
func rowColdStart(dir string) (string, error) {
	firsts := map[string][]float64{}
	readys := map[string][]float64{}
	lines := map[string][]string{}
	for r := 0; r < 3; r++ {
		for k := range builds() {
			b := builds()[(k+r)%len(builds())]
			data, _, err := indexedDataDir(dir, b)
			if err != nil {
				return "", err
			}
			p, err := startOpsagent(b.bin, data)
			if err != nil {
				return "", err
			}
			first, err1 := waitStatus(p, "/healthz", 200, 30*time.Second)
			ready, err2 := waitStatus(p, "/readyz", 200, 60*time.Second)
			p.stop()
			if err1 != nil || err2 != nil {
				return "", fmt.Errorf("%v %v", err1, err2)
			}
			firsts[b.name] = append(firsts[b.name], float64(first.Milliseconds()))
			readys[b.name] = append(readys[b.name], float64(ready.Milliseconds()))
			lines[b.name] = append(lines[b.name], fmt.Sprintf("%d ms (ready %d ms)", first.Milliseconds(), ready.Milliseconds()))
			fmt.Printf("  cold start %d, %s: first 200 after %s, /readyz 200 after %s\n", r+1, b.name, first, ready)
		}
	}
	verdict := "meets"
	if median(firsts["this build"]) > 300 {
		verdict = "SHORT"
	}
	return fmt.Sprintf("| cold start to first 200 (GET /healthz, from exec) with a 10k-document index, built binary, 3 starts (21) | `.ci/bench.sh coldstart` | %s; median %.0f ms, index ready after %.0f ms, %s; load %s | <= 300 ms |",
		describe(lines), median(firsts["this build"]), median(readys["this build"]), verdict, loadavg()), nil
}

// rowRSS: idle RSS of the built binary with the 10k-document index loaded,
// then after a burst of 8 simultaneous logins, each read after 5 s idle.
func rowRSS(dir string) (string, error) {
	lines := map[string][]string{}
	worst := 0.0
	for _, b := range builds() {
		idle, peak, after, err := rssOf(dir, b)
		if err != nil {
			return "", err
		}
		if b.name == "this build" {
			worst = max(idle, after)
		}
		lines[b.name] = append(lines[b.name], fmt.Sprintf("%.1f MB idle, %.1f MB after the logins (peak %.1f MB)", idle, after, peak))
		fmt.Printf("  RSS with the 10k index, %s: idle %.1f MB; 8 logins: peak %.1f MB, 5 s later %.1f MB\n", b.name, idle, peak, after)
	}
	verdict := "meets"
	if worst > 64 {
		verdict = "SHORT"
	}
	return fmt.Sprintf("| idle RSS with a 10k-document index, built binary, 5 s after start-up and 5 s after 8 simultaneous logins (21) | `.ci/bench.sh rss` | %s; %s; load %s | <= 64 MB |",
		describe(lines), verdict, loadavg()), nil
}

func rssOf(dir string, b build) (idle, peak, after float64, err error) {
	data, a, err := indexedDataDir(dir, b)
	if err != nil {
		return 0, 0, 0, err
	}
	p, err := startOpsagent(b.bin, data)
	if err != nil {
		return 0, 0, 0, err
	}
	defer p.stop()
	if _, err := waitStatus(p, "/readyz", 200, time.Minute); err != nil {
		return 0, 0, 0, err
	}
	time.Sleep(5 * time.Second)
	idle = p.rssMB()
	var wg sync.WaitGroup
	var mu sync.Mutex
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
				mu.Lock()
				peak = max(peak, p.rssMB())
				mu.Unlock()
			}
		}
	}()
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := call(client(srcIP(i)), "POST", p.url("/api/auth/login"), "", "", map[string]string{"email": a.email, "password": password}, nil)
			errs <- err
		}()
	}
	wg.Wait()
	close(stop)
	close(errs)
	if err := <-errs; err != nil {
		return 0, 0, 0, err
	}
	time.Sleep(5 * time.Second)
	mu.Lock()
	defer mu.Unlock()
	return idle, peak, p.rssMB(), nil
}
