//go:build pprof

package main

import (
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
)

// startPprof serves Go's profiler on addr when the environment variable
// OPSAGENT_PPROF_ADDR names one, in a binary built with `-tags pprof` only
// (net/http/pprof adds ~0.4 MB, which the product's size budget does not
// pay): it is how the performance work profiles the built binary under an
// external load generator (BENCHMARKS.md). Only a loopback address is
// accepted, since the profiler exposes memory contents and stack traces to
// whoever can reach it.
func startPprof(addr string, logger *slog.Logger) error {
	if addr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("OPSAGENT_PPROF_ADDR: %w", err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("OPSAGENT_PPROF_ADDR must be a loopback address, not %q", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("OPSAGENT_PPROF_ADDR: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	logger.Warn("profiler listening (OPSAGENT_PPROF_ADDR)", "addr", ln.Addr().String())
	go func() { _ = http.Serve(ln, mux) }()
	return nil
}
