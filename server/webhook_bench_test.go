package server_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/internal/testsrv"
	"github.com/opsagent/opsagent/server"
)

// BenchmarkWebhookIngest measures durable ingest through the real server
// (verification, redaction, parsing, group commit with synchronous=FULL,
// 202 after the commit) against a bare handler that reads the body and
// answers 202, in the same run, with the same client load. It reports
// events/s and p99 latency of each.
//
//	go test ./server -run '^$' -bench WebhookIngest -benchtime 20000x
//
// Each handler runs with 64 and with 256 concurrent keep-alive clients;
// cpu-us/event is the CPU of the whole process (load generator included)
// per event, counted until the dispatcher has handled every event.
func BenchmarkWebhookIngest(b *testing.B) {
	ctx := context.Background()
	ts := testsrv.Start(b, "", testsrv.Options{Logger: slog.New(slog.DiscardHandler), Config: []func(*server.Config){func(c *server.Config) {
		c.Signup, c.MailFrom, c.LogLevel = "open", "x <x@test>", ""
	}}})
	db, base := ts.DB, ts.URL
	call := func(method, path, token, project string, body any) map[string]any {
		return testkit.Call(b, method, base+path, token, project, body, 0)
	}
	tok := call("POST", "/api/auth/register", "", "", map[string]any{"email": "bench@example.com", "password": "correct horse battery", "name": "b"})["access_token"].(string)
	proj := call("POST", "/api/projects", tok, "", map[string]any{"name": "prod"})["id"].(string)
	task := call("POST", "/api/tasks", tok, proj, map[string]any{"name": "alert", "prompt": "look", "overlap_policy": "queue"})["id"].(string)
	// A correlated Alertmanager storm: what an alert source sends under load.
	secret := call("PUT", "/api/tasks/"+task+"/webhook", tok, proj, map[string]any{"provider": "alertmanager",
		"rate_limit_per_minute": 100000, "dedupe_window_seconds": 0})["secret"].(string)
	hookURL := base + "/api/webhooks/" + task

	bare := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.WriteHeader(202)
		w.Write([]byte(`{"status":"accepted"}`))
	})}
	bln, _ := net.Listen("tcp", "127.0.0.1:0")
	go bare.Serve(bln)
	defer bare.Close()
	bareURL := "http://" + bln.Addr().String() + "/"

	// drained waits until the dispatcher has handled every stored event, so
	// each durable run pays for its own dispatch and not the previous one's.
	drained := func() {
		for {
			evs, err := db.PendingWebhookEvents(ctx, 1)
			if err != nil {
				b.Fatal(err)
			}
			if len(evs) == 0 {
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	for _, clients := range []int{64, 256} {
		for _, tc := range []struct{ name, url string }{{"bare", bareURL}, {"durable", hookURL}} {
			b.Run(fmt.Sprintf("%s/c%d", tc.name, clients), func(b *testing.B) {
				drained()
				cpu0 := cpuTime()
				eps, p99 := loadTest(b, tc.url, secret, b.N, clients)
				t0 := time.Now()
				drained()
				b.ReportMetric(eps, "events/s")
				b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
				// CPU of the whole process (load generator included) per
				// event, up to the moment every event was dispatched.
				b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-us/event")
				if tc.name == "durable" {
					b.ReportMetric(float64(time.Since(t0).Milliseconds()), "dispatch-lag-ms")
				}
			})
		}
	}
}

// loadTest posts n signed deliveries from c concurrent clients.
func loadTest(b *testing.B, url, secret string, n, c int) (float64, time.Duration) {
	tr := &http.Transport{MaxIdleConnsPerHost: c, MaxConnsPerHost: c}
	hc := &http.Client{Transport: tr}
	defer tr.CloseIdleConnections()
	var next atomic.Int64
	lat := make([][]time.Duration, c)
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for w := 0; w < c; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				body := amAlert("{}:{alertname=Storm}", fmt.Sprintf("fp-%d", i), "firing")
				req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+secret)
				t0 := time.Now()
				res, err := hc.Do(req)
				if err != nil {
					b.Error(err)
					return
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 202 {
					b.Errorf("status %d", res.StatusCode)
					return
				}
				lat[w] = append(lat[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	all := slices.Concat(lat...)
	slices.Sort(all)
	if len(all) == 0 {
		return 0, 0
	}
	return float64(len(all)) / elapsed.Seconds(), all[len(all)*99/100]
}
