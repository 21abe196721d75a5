package agent

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/opsagent/opsagent/server/connector"
)

// BenchmarkRoundTrip measures a command's round trip through the hub and
// a real connector session (dial, frames, exec of /bin/sh -c true, output,
// result) above the command's own run time as the host measured it, and,
// alternated in the same run, a bare WebSocket echo of a frame of the same
// size on the same loopback.
//
//	go test ./server/connector/agent -run '^$' -bench RoundTrip -benchtime 2000x
func BenchmarkRoundTrip(b *testing.B) {
	hub := connector.NewHub(connector.Options{})
	defer hub.Close()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		if strings.HasSuffix(r.URL.Path, "/echo") {
			ctx := context.Background()
			for {
				typ, data, err := ws.Read(ctx)
				if err != nil {
					return
				}
				if ws.Write(ctx, typ, data) != nil {
					return
				}
			}
		}
		hub.Serve(context.Background(), ws, connector.Identity{ConnectorID: "bench", Name: "bench"}, "127.0.0.1")
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := Config{Server: srv.URL, Token: "ocn_bench", Client: http.DefaultClient, Version: "bench",
		Logger: slog.New(slog.DiscardHandler)}
	go func() { _ = Run(ctx, cfg) }()
	for !hub.Status("bench").Online {
		time.Sleep(5 * time.Millisecond)
	}
	echo, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(srv.URL, "http")+"/echo", nil)
	if err != nil {
		b.Fatal(err)
	}
	defer echo.CloseNow()
	frame := connector.Encode(&connector.Frame{Type: connector.TypeRun, CallID: "0123456789abcdef0123456789abcdef",
		Run: &connector.Run{Command: "true", TimeoutMS: 10000, MaxOutput: 1 << 20}})
	var over, bare []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if err := echo.Write(ctx, websocket.MessageText, frame); err != nil {
			b.Fatal(err)
		}
		if _, _, err := echo.Read(ctx); err != nil {
			b.Fatal(err)
		}
		bare = append(bare, time.Since(t0))
		t1 := time.Now()
		res, err := hub.Call(ctx, "bench", connector.Run{Command: "true", TimeoutMS: 10000, MaxOutput: 1 << 20}, io.Discard)
		if err != nil || res.ExitCode != 0 {
			b.Fatalf("call: %+v %v", res, err)
		}
		over = append(over, time.Since(t1)-time.Duration(res.DurationUS)*time.Microsecond)
	}
	b.StopTimer()
	b.ReportMetric(ms(pct(over, 50)), "p50-overhead-ms")
	b.ReportMetric(ms(pct(over, 99)), "p99-overhead-ms")
	b.ReportMetric(ms(pct(bare, 50)), "p50-echo-ms")
	b.ReportMetric(ms(pct(bare, 99)), "p99-echo-ms")
}

func pct(ds []time.Duration, p int) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[min(len(s)-1, len(s)*p/100)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
