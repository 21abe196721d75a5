package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime/pprof"
	"strconv"
	"time"
)

// pprofEnv names the profiling switch: off unless set, and only ever on a
// loopback address, so profiles (stacks, memory) never leave the host. It
// is an environment variable and not a serve flag on purpose: it is for
// measuring the built binary under load (BENCHMARKS.md), not a setting an
// operator keeps. Only runtime/pprof is used (net/http/pprof's index pulls
// in html/template: +400 KB of binary):
//
//	curl -o cpu.pprof 'http://ADDR/debug/pprof/profile?seconds=10'
//	curl -o heap.pprof 'http://ADDR/debug/pprof/heap'
const pprofEnv = "OPSAGENT_DEBUG_PPROF_ADDR"

// startPprof serves CPU and heap profiles on addr (a loopback HOST:PORT)
// and returns the bound address, or "" when addr is empty.
func startPprof(addr string, logger *slog.Logger) (string, error) {
	if addr == "" {
		return "", nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pprofEnv, err)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("%s must be a loopback address, not %q", pprofEnv, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return "", fmt.Errorf("%s: %w", pprofEnv, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		secs, _ := strconv.Atoi(r.URL.Query().Get("seconds"))
		if err := pprof.StartCPUProfile(w); err != nil {
			http.Error(w, err.Error(), http.StatusConflict)
			return
		}
		time.Sleep(time.Duration(min(max(secs, 1), 120)) * time.Second)
		pprof.StopCPUProfile()
	})
	mux.HandleFunc("/debug/pprof/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := pprof.Lookup(r.PathValue("name"))
		if p == nil {
			http.NotFound(w, r)
			return
		}
		_ = p.WriteTo(w, 0)
	})
	go func() { _ = http.Serve(ln, mux) }()
	logger.Warn("profiling endpoint on (loopback only)", "addr", ln.Addr().String(), "env", pprofEnv)
	return ln.Addr().String(), nil
}
