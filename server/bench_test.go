//go:build unix

package server_test

// Benchmarks of the foundation's hot paths over real loopback HTTP:
//
//	go test -run '^$' -bench . -benchtime 3s ./server/
//
// BenchmarkMeVersusBareRouter reports, from one run (ten interleaved rounds), the throughput of an
// authenticated GET /api/auth/me (token check, session and role lookup in
// SQLite, user read, access log) and of a bare httprouter handler answering
// the same path with a fixed body, plus their ratio. BenchmarkLogin reports
// sign-ins per second (argon2id, capped at one hash per CPU, plus two writes).

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/opsagent/opsagent/internal/testsrv"
	"github.com/opsagent/opsagent/server"
)

// benchServer boots the real server as main does, logging at info level to
// a discarding handler (formatting is paid, terminal I/O is not).
func benchServer(b *testing.B, opts ...func(*server.Config)) string {
	b.Helper()
	opts = append([]func(*server.Config){func(c *server.Config) { c.Signup, c.MailFrom, c.LogLevel = "open", "", "" }}, opts...)
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return testsrv.Start(b, "", testsrv.Options{Logger: logger, Config: opts}).URL
}

func serveBench(b *testing.B, serve func(context.Context, net.Listener) error, ctx context.Context, cancel func(), closers ...func() error) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() { defer close(done); _ = serve(ctx, ln) }()
	b.Cleanup(func() {
		cancel()
		<-done
		for _, c := range closers {
			c()
		}
	})
	return "http://" + ln.Addr().String()
}

// bareServer is the yardstick: httprouter and net/http with nothing else.
func bareServer(b *testing.B) string {
	rt := httprouter.New()
	body := []byte(`{"id":"0190c0de-0000-7000-8000-000000000000","email":"bench@example.com","name":"bench","email_verified":false,"avatar_url":null,"current_org_id":"0190c0de-0000-7000-8000-000000000001","role":"owner","mfa_enabled":false}` + "\n")
	rt.GET("/api/auth/me", func(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})
	ctx, cancel := context.WithCancel(context.Background())
	hs := &http.Server{Handler: rt}
	serve := func(ctx context.Context, ln net.Listener) error {
		go func() { <-ctx.Done(); hs.Close() }()
		return hs.Serve(ln)
	}
	return serveBench(b, serve, ctx, cancel)
}

func benchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: 256, MaxIdleConnsPerHost: 256, IdleConnTimeout: time.Minute}}
}

func get(b *testing.B, hc *http.Client, url, token string) {
	req, _ := http.NewRequest("GET", url, nil)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := hc.Do(req)
	if err != nil {
		b.Error(err)
		return
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != 200 {
		b.Errorf("GET %s: %d", url, res.StatusCode)
	}
}

// registerBench creates an account and returns its access token.
func registerBench(b *testing.B, base, email string) string {
	b.Helper()
	res, err := http.Post(base+"/api/auth/register", "application/json",
		strings.NewReader(fmt.Sprintf(`{"email":%q,"password":%q}`, email, pw)))
	if err != nil {
		b.Fatal(err)
	}
	defer res.Body.Close()
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	if res.StatusCode != 201 {
		b.Fatalf("register: %d", res.StatusCode)
	}
	if err := decodeJSON(res.Body, &tok); err != nil {
		b.Fatal(err)
	}
	return tok.AccessToken
}

// cpuTime is the CPU (user + system) this process has used: client and
// server together, which is the same overhead for both sides of a ratio.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timedParallel runs f b.N times over the parallel goroutines and returns
// requests per wall-clock second and CPU microseconds per request. On a busy
// machine the first falls with the load; the second barely moves.
func timedParallel(b *testing.B, f func()) (perSec, cpuMicros float64) {
	start, cpu := time.Now(), cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			f()
		}
	})
	return float64(b.N) / time.Since(start).Seconds(), float64((cpuTime() - cpu).Microseconds()) / float64(b.N)
}

func BenchmarkMeVersusBareRouter(b *testing.B) {
	base := benchServer(b)
	token := registerBench(b, base, "bench@example.com")
	bare := bareServer(b)
	hc := benchClient()
	for i := 0; i < 50; i++ { // warm both connection pools
		get(b, hc, base+"/api/auth/me", token)
		get(b, hc, bare+"/api/auth/me", "")
	}
	b.SetParallelism(4)
	b.ResetTimer()
	// Interleave ten rounds, alternating which side goes first, so bursts of
	// load from elsewhere on the machine hit both sides alike.
	const rounds = 10
	n := b.N
	b.N = max(n/(2*rounds), 1)
	var meTime, bareTime, meCPU, bareCPU time.Duration
	side := func(url, token string, wall, cpu *time.Duration) {
		start, c := time.Now(), cpuTime()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				get(b, hc, url, token)
			}
		})
		*wall += time.Since(start)
		*cpu += cpuTime() - c
	}
	for i := 0; i < rounds; i++ {
		if i%2 == 0 {
			side(bare+"/api/auth/me", "", &bareTime, &bareCPU)
			side(base+"/api/auth/me", token, &meTime, &meCPU)
		} else {
			side(base+"/api/auth/me", token, &meTime, &meCPU)
			side(bare+"/api/auth/me", "", &bareTime, &bareCPU)
		}
	}
	per := float64(b.N * rounds)
	b.N = n
	b.StopTimer()
	meRate, bareRate := per/meTime.Seconds(), per/bareTime.Seconds()
	b.ReportMetric(meRate, "me_req/s")
	b.ReportMetric(bareRate, "bare_req/s")
	b.ReportMetric(meRate/bareRate, "ratio")
	b.ReportMetric(float64(meCPU.Microseconds())/per, "me_cpu_us/req")
	b.ReportMetric(float64(bareCPU.Microseconds())/per, "bare_cpu_us/req")
	b.ReportMetric(float64(bareCPU)/float64(meCPU), "cpu_ratio")
}

func BenchmarkAuthMe(b *testing.B) {
	base := benchServer(b)
	token := registerBench(b, base, "bench@example.com")
	hc := benchClient()
	b.SetParallelism(4)
	b.ResetTimer()
	rate, cpu := timedParallel(b, func() { get(b, hc, base+"/api/auth/me", token) })
	b.ReportMetric(rate, "req/s")
	b.ReportMetric(cpu, "cpu_us/req")
}

func BenchmarkLogin(b *testing.B) {
	// Behind a trusted proxy each request names its own client address, so the
	// per-IP limit (which this benchmark would trip at once) stays out of the way.
	base := benchServer(b, func(c *server.Config) { c.TrustProxy = true })
	registerBench(b, base, "bench@example.com")
	hc := benchClient()
	var ip atomic.Uint32
	body := fmt.Sprintf(`{"email":"bench@example.com","password":%q}`, pw)
	b.SetParallelism(2)
	b.ResetTimer()
	rate, cpu := timedParallel(b, func() {
		n := ip.Add(1)
		req, _ := http.NewRequest("POST", base+"/api/auth/login", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", fmt.Sprintf("10.%d.%d.%d", n>>16&255, n>>8&255, n&255))
		res, err := hc.Do(req)
		if err != nil {
			b.Error(err)
			return
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != 200 {
			b.Errorf("login: %d", res.StatusCode)
		}
	})
	b.ReportMetric(rate, "logins/s")
	b.ReportMetric(cpu/1000, "cpu_ms/login")
	// What two otherwise idle cores sustain: CPU is the bound (argon2id).
	b.ReportMetric(2e6/cpu, "logins/s_on_2_idle_cores")
}
