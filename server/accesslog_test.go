package server

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// slogLine is what slog's own handler writes for the access line.
func slogLine(t testing.TB, json bool, at time.Time, level slog.Level, a *accessLine) string {
	var buf bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelDebug}
	var h slog.Handler = slog.NewTextHandler(&buf, opts)
	if json {
		h = slog.NewJSONHandler(&buf, opts)
	}
	r := slog.NewRecord(at, level, "request", 0)
	r.AddAttrs(a.attrs()...)
	if err := h.Handle(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// directLine is what the direct writer writes ("" when it leaves the
// line to slog).
func directLine(json bool, at time.Time, level slog.Level, a *accessLine) string {
	var buf bytes.Buffer
	h := NewLogHandler(&buf, slog.LevelDebug, json).(*logHandler)
	if !h.write(at, level, a) {
		return ""
	}
	return buf.String()
}

var accessLines = []accessLine{
	{requestID: "0194c3b2-7d1e-7a4b-9c3d-5e6f7a8b9c0d", method: "POST", route: "/api/webhooks/{task_id}", status: 202,
		durationMS: 3.456, bytes: 81, ip: "127.0.0.1"},
	{requestID: "r1", method: "GET", route: "/api/tasks/{task_id}", status: 200, durationMS: 0, bytes: 0, ip: "::1",
		hasUser: true, userID: "u1", orgID: "o1", keyID: "k1", projectID: "p1"},
	{requestID: "r2", method: "GET", route: "/api/me", status: 401, durationMS: 0.001, ip: "10.0.0.1", hasUser: true, userID: "u2"},
	{requestID: "r3", method: "GET", route: "/api/stream", status: 200, durationMS: 1234567.891, bytes: 1 << 40, ip: "10.0.0.1"},
	{requestID: "r4", method: "GET", route: "/x", status: 200, durationMS: 1e22, ip: "h"},
	{requestID: "r5", method: "GET", route: "/x", status: 200, durationMS: 1e-7, ip: "h"},
	{requestID: "r6", method: "GET", route: "/x", status: 200, durationMS: -2.5, ip: "h"},
	{requestID: "r7", method: "GET", route: "/x", status: 200, durationMS: 100, ip: "h"},
	{requestID: "r8", method: "GET", route: "/x", status: 200, durationMS: 999999, ip: "h", projectID: "p"},
	// Values slog quotes or escapes: the direct writer leaves them to slog.
	{requestID: "", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "a b", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: `a"b`, method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: `a\b`, method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "a=b", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "a\nb", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "é", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "a\x7fb", method: "GET", route: "/x", status: 200, ip: "h"},
	{requestID: "r", method: "GET", route: "/x", status: 200, ip: "h", hasUser: true, userID: ""},
	{requestID: "r", method: "GET", route: "/x", status: 200, ip: "h", hasUser: true, userID: "u", orgID: "o o"},
	{requestID: "r", method: "GET", route: "/x", status: 200, ip: "h", hasUser: false, orgID: "ignored", keyID: "ignored"},
}

func accessTimes() []time.Time {
	est := time.FixedZone("EST", -5*3600)
	return []time.Time{
		time.Now(), // with a monotonic reading
		time.Date(2026, 11, 28, 1, 2, 3, 0, time.UTC),
		time.Date(2026, 11, 28, 1, 2, 3, 999_999_999, time.UTC),
		time.Date(2026, 11, 28, 1, 2, 3, 120_000_000, est),
		time.Date(2026, 1, 2, 3, 4, 5, 100_500, time.Local),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
	}
}

// TestAccessLineAsSlog: the direct writer's line is slog's own, byte for
// byte, in both formats, and it writes the ordinary lines itself.
func TestAccessLineAsSlog(t *testing.T) {
	for _, json := range []bool{false, true} {
		for i := range accessLines {
			a := &accessLines[i]
			for _, at := range accessTimes() {
				for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
					want := slogLine(t, json, at, level, a)
					got := directLine(json, at, level, a)
					if got == "" {
						if i < 4 && at.Year() < 10000 {
							t.Errorf("json=%v line %d at %v: left to slog", json, i, at)
						}
						continue
					}
					if got != want {
						t.Errorf("json=%v line %d at %v:\n got %s\nwant %s", json, i, at, got, want)
					}
				}
			}
		}
	}
}

// TestLogAccessFallsBackToSlog: a line the direct writer leaves to slog is
// still written, once, and a logger that is not ours gets slog's line.
func TestLogAccessFallsBackToSlog(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(NewLogHandler(&buf, slog.LevelInfo, false))
	odd := accessLine{requestID: "a b", method: "GET", route: "/x", status: 200, ip: "h"}
	logAccess(context.Background(), log, slog.LevelInfo, &odd)
	if n := bytes.Count(buf.Bytes(), []byte("\n")); n != 1 || !bytes.Contains(buf.Bytes(), []byte(`request_id="a b" method=GET`)) {
		t.Fatalf("fallback line: %q", buf.String())
	}
	buf.Reset()
	other := slog.New(slog.NewJSONHandler(&buf, nil))
	logAccess(context.Background(), other, slog.LevelInfo, &accessLines[0])
	if !bytes.Contains(buf.Bytes(), []byte(`"msg":"request","request_id":"0194c3b2-7d1e-7a4b-9c3d-5e6f7a8b9c0d","method":"POST"`)) {
		t.Fatalf("other handler's line: %q", buf.String())
	}
}

func FuzzAccessLine(f *testing.F) {
	f.Add("r", "/api/x", "127.0.0.1", "u", 1.5, int64(3), true)
	f.Add("a b", "/", "", "", 0.0, int64(0), false)
	f.Fuzz(func(t *testing.T, rid, route, ip, user string, d float64, n int64, json bool) {
		a := &accessLine{requestID: rid, method: "POST", route: route, status: 202, durationMS: d, bytes: n, ip: ip,
			hasUser: user != "", userID: user}
		at := time.Date(2026, 11, 28, 1, 2, 3, int(n&0x3fffffff), time.UTC)
		if got := directLine(json, at, slog.LevelInfo, a); got != "" {
			if want := slogLine(t, json, at, slog.LevelInfo, a); got != want {
				t.Fatalf("\n got %s\nwant %s", got, want)
			}
		}
	})
}

func BenchmarkAccessLine(b *testing.B) {
	a := &accessLines[0]
	b.Run("direct", func(b *testing.B) {
		log := slog.New(NewLogHandler(discard{}, slog.LevelInfo, false))
		for b.Loop() {
			logAccess(context.Background(), log, slog.LevelInfo, a)
		}
	})
	b.Run("slog", func(b *testing.B) {
		log := slog.New(slog.NewTextHandler(discard{}, nil))
		for b.Loop() {
			log.LogAttrs(context.Background(), slog.LevelInfo, "request", a.attrs()...)
		}
	})
}

type discard struct{}

func (discard) Write(b []byte) (int, error) { return len(b), nil }

// TestLogOutputQueuedLines: on a file, access lines queued behind a write
// under way all arrive, whole, once, each writer's in its order, and the
// other lines too, by the time every writer has returned.
func TestLogOutputQueuedLines(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := NewLogHandler(f, slog.LevelInfo, false).(*logHandler).out
	if !out.queue {
		t.Fatal("a file output does not queue access lines")
	}
	const writers, lines = 16, 500
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			buf := make([]byte, 0, 64)
			for i := range lines {
				buf = fmt.Appendf(buf[:0], "w=%d i=%d %s\n", g, i, strings.Repeat("x", i%40))
				if i%10 == 0 {
					_, _ = out.Write(buf)
				} else {
					_, _ = out.write(buf, true)
				}
				buf[0] = '!' // the caller's buffer is its own again
			}
		})
	}
	wg.Wait()
	data, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	next := make([]int, writers)
	n := 0
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		var g, i int
		if _, err := fmt.Sscanf(l, "w=%d i=%d", &g, &i); err != nil || g < 0 || g >= writers {
			t.Fatalf("torn line %q", l)
		}
		if i != next[g] || l != fmt.Sprintf("w=%d i=%d %s", g, i, strings.Repeat("x", i%40)) {
			t.Fatalf("writer %d: line %q, want i=%d", g, l, next[g])
		}
		next[g]++
		n++
	}
	if n != writers*lines {
		t.Fatalf("%d lines, want %d", n, writers*lines)
	}
}
