package server_test

import (
	"bufio"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// On shutdown an ordinary request in flight finishes with its context intact,
// while an event stream is told to end at once; Serve then returns nil.
func TestShutdownDrainsRequestsAndEndsStreams(t *testing.T) {
	t.Parallel()
	srv := unserved(t, server.Config{ShutdownTimeout: 10 * time.Second}, server.Deps{Logger: slog.New(slog.DiscardHandler)})
	inSlow, inStream := make(chan struct{}), make(chan struct{})
	server.AddRouteForTest(srv, &server.Route{Method: "GET", Path: "/api/test/slow", Auth: server.AuthNone, Status: 200,
		Handle: func(c *server.Ctx) error {
			close(inSlow)
			time.Sleep(300 * time.Millisecond)
			if err := c.Context().Err(); err != nil {
				return err
			}
			return c.JSON(200, map[string]string{"done": "yes"})
		}})
	server.AddRouteForTest(srv, &server.Route{Method: "GET", Path: "/api/test/stream", Auth: server.AuthNone, Status: 200, RawBody: true,
		Handle: func(c *server.Ctx) error {
			c.W.Header().Set("Content-Type", "text/event-stream")
			c.W.WriteHeader(200)
			io.WriteString(c.W, "event: hello\ndata: {}\n\n")
			c.W.(http.Flusher).Flush()
			close(inStream)
			select {
			case <-c.Context().Done():
				io.WriteString(c.W, "event: bye\ndata: {}\n\n")
			case <-time.After(20 * time.Second):
			}
			return nil
		}})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ln) }()

	streamDone := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest("GET", base+"/api/test/stream", nil)
		req.Header.Set("Accept", "text/event-stream")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			streamDone <- err.Error()
			return
		}
		defer res.Body.Close()
		var events []string
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "event: ") {
				events = append(events, strings.TrimPrefix(sc.Text(), "event: "))
			}
		}
		streamDone <- strings.Join(events, ",")
	}()
	slowDone := make(chan int, 1)
	go func() {
		res, err := http.Get(base + "/api/test/slow")
		if err != nil {
			slowDone <- 0
			return
		}
		res.Body.Close()
		slowDone <- res.StatusCode
	}()
	<-inStream
	<-inSlow
	start := time.Now()
	cancel()
	select {
	case got := <-streamDone:
		if got != "hello,bye" {
			t.Fatalf("stream events: got %q, want hello,bye", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the stream did not end at shutdown")
	}
	if code := <-slowDone; code != 200 {
		t.Fatalf("request in flight at shutdown: got %d, want 200", code)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("shutdown took %v", d)
	}
}

// The server registers its own background work with the scheduler it is given.
func TestServerRegistersItsJobs(t *testing.T) {
	t.Parallel()
	logger := slog.New(slog.DiscardHandler)
	jobs := scheduler.New(logger)
	unserved(t, server.Config{}, server.Deps{Jobs: jobs, Logger: logger})
	if got := strings.Join(jobs.Jobs(), ","); got != "account-erasure,approval-expiry,channel-deliveries,heartbeats,kube-changes,purge-expired,retention,webhook-retention" {
		t.Fatalf("jobs: got %s", got)
	}
	jobs.Start()
	jobs.Stop()
}

// unserved builds a server over a fresh database in a temp dir without
// serving it, for tests that add routes or read its jobs first and drive
// Serve themselves; cfg gets the loopback address, the dir and 1 MiB bodies.
func unserved(t *testing.T, cfg server.Config, deps server.Deps) *server.Server {
	t.Helper()
	cfg.Addr, cfg.DataDir, cfg.MaxBodyBytes = "127.0.0.1:0", t.TempDir(), 1<<20
	db, err := store.Open(context.Background(), cfg.DataDir+"/opsagent.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	deps.DB = db
	srv, err := server.New(cfg, deps)
	if err != nil {
		t.Fatal(err)
	}
	return srv
}
