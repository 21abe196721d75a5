package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strconv"
	"time"
)

// pprofFlags registers the profiling switch: off by default, and only on a
// loopback address, because a profile shows code paths and timings an
// attacker should not see and costs CPU while it runs. Performance claims
// in BENCHMARKS.md are profiled against the built binary under load with
//
//	opsagent serve --pprof-addr 127.0.0.1:6060 ...
//	go tool pprof -seconds 20 opsagent http://127.0.0.1:6060/debug/pprof/profile
//
// Only runtime/pprof is linked (not net/http/pprof, whose init registers
// on http.DefaultServeMux and pulls in the trace and symbol handlers).
func (c *Config) pprofFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.PprofAddr, "pprof-addr", "", "loopback HOST:PORT serving Go profiles under /debug/pprof/ (profile?seconds=N, heap, allocs, goroutine, mutex, block); unset: off")
}

// validatePprof refuses a profiling address that is not loopback.
func (c *Config) validatePprof() []error {
	if c.PprofAddr == "" {
		return nil
	}
	host, _, err := net.SplitHostPort(c.PprofAddr)
	if err != nil {
		return []error{fmt.Errorf("pprof-addr must be HOST:PORT: %v", err)}
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return []error{fmt.Errorf("pprof-addr must be a loopback address (127.0.0.1, ::1 or localhost), not %q", c.PprofAddr)}
	}
	return nil
}

// pprofHandler serves the CPU profile and the runtime's named profiles.
func pprofHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /debug/pprof/profile", func(w http.ResponseWriter, r *http.Request) {
		secs, _ := strconv.Atoi(r.URL.Query().Get("seconds"))
		if secs <= 0 || secs > 300 {
			secs = 30
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		if err := pprof.StartCPUProfile(w); err != nil {
			http.Error(w, err.Error(), http.StatusConflict) // another profile is running
			return
		}
		select {
		case <-time.After(time.Duration(secs) * time.Second):
		case <-r.Context().Done():
		}
		pprof.StopCPUProfile()
	})
	mux.HandleFunc("GET /debug/pprof/{name}", func(w http.ResponseWriter, r *http.Request) {
		p := pprof.Lookup(r.PathValue("name"))
		if p == nil {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/octet-stream")
		_ = p.WriteTo(w, 0)
	})
	return mux
}

// servePprof starts the profiling listener when --pprof-addr is set; the
// returned stop closes it.
func (s *Server) servePprof() (stop func(), err error) {
	if s.cfg.PprofAddr == "" {
		return func() {}, nil
	}
	ln, err := net.Listen("tcp", s.cfg.PprofAddr)
	if err != nil {
		return nil, fmt.Errorf("pprof-addr: %w", err)
	}
	runtime.SetMutexProfileFraction(5)
	runtime.SetBlockProfileRate(int(time.Millisecond))
	hs := &http.Server{Handler: pprofHandler(), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Warn("pprof listener stopped", "err", err)
		}
	}()
	s.log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { _ = hs.Shutdown(context.Background()) }, nil
}
