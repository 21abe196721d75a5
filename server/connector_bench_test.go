package server_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/connector/agent"
)

// procStatus reads one "Name: value kB" line of /proc/PID/status, in KB.
func procStatus(tb testing.TB, pid int, field string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			n, _ := strconv.ParseInt(strings.Fields(v)[0], 10, 64)
			return n
		}
	}
	tb.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}

// cpuTicks is the process's user+system time in clock ticks (100 Hz).
func cpuTicks(tb testing.TB, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		tb.Fatal(err)
	}
	f := strings.Fields(string(b)[strings.LastIndexByte(string(b), ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

// cpuShare is the server's CPU use over d, as a fraction of one core.
func cpuShare(tb testing.TB, pid int, d time.Duration) float64 {
	t0 := cpuTicks(tb, pid)
	time.Sleep(d)
	return float64(cpuTicks(tb, pid)-t0) / 100 / d.Seconds()
}

// BenchmarkConnectorIdle1000 holds 1,000 idle connectors (real connector
// sessions, in this process) on the real binary with the default 10 s
// heartbeat, and reads the server's memory per connector and heartbeat
// CPU against the same server idle with none, in the same run.
//
//	go test ./server -run '^$' -bench ConnectorIdle1000 -benchtime 1x
func BenchmarkConnectorIdle1000(b *testing.B) {
	const n = 1000
	window := 30 * time.Second
	w := newConnWorldBeat(b, "10s")
	pid := w.server.Cmd.Process.Pid
	tokens := make([]string, n)
	for i := range tokens {
		tokens[i], _ = w.enroll(w.c, fmt.Sprintf("idle-%04d", i), map[string]string{"env": "bench"})
	}
	time.Sleep(2 * time.Second)
	rss0 := procStatus(b, pid, "VmRSS")
	idle0 := cpuShare(b, pid, window)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	tr := &http.Transport{MaxIdleConnsPerHost: n}
	for _, tok := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = agent.Run(ctx, agent.Config{Server: w.env.URL, Token: tok, Client: &http.Client{Transport: tr},
				Version: "bench", Logger: slog.New(slog.DiscardHandler)})
		}()
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		l := w.c.must(200, "GET", "/api/connectors", nil).JSON()
		if l["online"] == float64(n) {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("only %v of %d online", l["online"], n)
		}
		time.Sleep(500 * time.Millisecond)
	}
	time.Sleep(3 * time.Second)
	rss1 := procStatus(b, pid, "VmRSS")
	idle1 := cpuShare(b, pid, window)
	cancel()
	wg.Wait()
	perConn := float64(rss1-rss0) / n
	b.ReportMetric(perConn, "KB-RSS/connector")
	b.ReportMetric(100*(idle1-idle0), "%core-heartbeat")
	b.ReportMetric(100*idle0, "%core-idle-baseline")
	b.Logf("RSS %d KB -> %d KB with %d connectors (%.1f KB each); CPU %.2f%% of a core idle, %.2f%% with them (window %s)",
		rss0, rss1, n, perConn, 100*idle0, 100*idle1, window)
}

// BenchmarkConnectorStream100MB streams 100 MB of command output from a
// real connector process through the real binary, and reads how much the
// server's peak memory grew.
//
//	go test ./server -run '^$' -bench ConnectorStream100MB -benchtime 1x
func BenchmarkConnectorStream100MB(b *testing.B) {
	w := newConnWorldBeat(b, "10s")
	pid := w.server.Cmd.Process.Pid
	w.c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "bench", "effect": "allow",
		"tool": "run_command", "match_type": "glob", "pattern": "*"})
	tok, _ := w.enroll(w.c, "big", nil)
	w.runHost("big", tok, "--log-level", "info")
	w.waitOnline(w.c, "big")
	w.c.hc.Timeout = 5 * time.Minute
	hwm0 := procStatus(b, pid, "VmHWM")
	start := time.Now()
	out := w.c.must(200, "POST", "/api/commands", map[string]any{"target": "big", "command": "./flood 100000000", "timeout_seconds": 600}).JSON()
	took := time.Since(start)
	hwm1 := procStatus(b, pid, "VmHWM")
	text, _ := out["output"].(string)
	if !strings.Contains(text, "exit code 0") || !strings.Contains(text, "flood-end") || !strings.Contains(text, "bytes of output dropped") {
		b.Fatalf("output: %.300s", text)
	}
	b.ReportMetric(100/took.Seconds(), "MB/s")
	b.ReportMetric(float64(hwm1-hwm0)/1024, "MB-peak-RSS-growth")
	b.Logf("100 MB in %s; server peak RSS %d KB -> %d KB; result %d bytes", took.Round(time.Millisecond), hwm0, hwm1, len(text))
}
