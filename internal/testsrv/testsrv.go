// Package testsrv starts the real opsagent server inside a test: a loopback
// port, a real SQLite file in a temp dir, the same server.New and Serve that
// main runs. Tests then talk HTTP to it (internal/testkit has the calls).
package testsrv

import (
	"context"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/internal/testkit"
	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/store"
)

// Server is a running server.
type Server struct {
	URL  string
	Srv  *server.Server
	DB   *store.DB
	Dir  string
	Cfg  server.Config
	Logs *testkit.SyncBuffer // debug-level text logs; nil with Options.Logger
	stop func()
}

// Options adjust a start.
type Options struct {
	// Clock, if set, is installed before anything runs (swapping it later
	// races with the background writers).
	Clock func() time.Time
	// Logger replaces the captured debug-level logs (benchmarks pass one
	// that discards, to pay for formatting or not as main would).
	Logger *slog.Logger
	// Config adjusts the configuration before the server is built.
	Config []func(*server.Config)
	// RAG is the knowledge store (Deps.RAG); nil: the server opens its own.
	RAG *rag.Store
	// OpenStore, if set, opens the store instead of dir's SQLite file (the
	// HTTP suite on PostgreSQL, and cluster nodes sharing one database).
	OpenStore func(ctx context.Context, dir string) (*store.DB, error)
}

// Config is the configuration tests start from: loopback, 1 MiB bodies,
// a 5 s drain, a test sender address, debug logs.
func Config(dir string) server.Config {
	return server.Config{Addr: "127.0.0.1:0", DataDir: dir, MaxBodyBytes: 1 << 20, ShutdownTimeout: 5 * time.Second, ShutdownGrace: 2 * time.Second,
		MailFrom: "opsagent <noreply@test>", LogLevel: "debug"}
}

// Start runs a server over dir (a new temp dir when empty); it stops, and the
// database closes, when the test ends or on Close.
func Start(tb testing.TB, dir string, o Options) *Server {
	tb.Helper()
	if dir == "" {
		dir = tb.TempDir()
	}
	cfg := Config(dir)
	for _, f := range o.Config {
		f(&cfg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	open := o.OpenStore
	if open == nil {
		open = func(ctx context.Context, dir string) (*store.DB, error) { return store.Open(ctx, dir+"/opsagent.db") }
	}
	db, err := open(ctx, dir)
	if err != nil {
		cancel()
		tb.Fatalf("open store: %v", err)
	}
	s := &Server{Dir: dir, Cfg: cfg, DB: db}
	logger := o.Logger
	if logger == nil {
		s.Logs = &testkit.SyncBuffer{}
		logger = slog.New(server.NewLogHandler(s.Logs, slog.LevelDebug, false))
	}
	if s.Srv, err = server.New(cfg, server.Deps{DB: db, Logger: logger, RAG: o.RAG}); err != nil {
		cancel()
		db.Close()
		tb.Fatalf("new server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		cancel()
		db.Close()
		tb.Fatal(err)
	}
	s.URL = "http://" + ln.Addr().String()
	if o.Clock != nil {
		s.Srv.SetClock(o.Clock)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.Srv.Serve(ctx, ln)
	}()
	var once sync.Once
	s.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			db.Close()
		})
	}
	tb.Cleanup(s.stop)
	return s
}

// Close stops the server and closes its database (Start also does it at the
// test's end); the data directory stays for a restart.
func (s *Server) Close() { s.stop() }
