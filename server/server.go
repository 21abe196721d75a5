// Package server is the HTTP API: one route table, one handler per route,
// errors in the shapes of CONVENTIONS.md. Nothing imports this package but main.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/audit"
	"github.com/opsagent/opsagent/server/auth"
	"github.com/opsagent/opsagent/server/billing"
	"github.com/opsagent/opsagent/server/connector"
	"github.com/opsagent/opsagent/server/knowledge"
	"github.com/opsagent/opsagent/server/mail"
	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Version is the product version reported by /api/version and OpenAPI.
var Version = "0.1.0"

// Server holds the parts every handler shares.
type Server struct {
	cfg     Config
	db      *store.DB
	secrets *secrets.Keeper // owns the vault: encrypt through it, it follows rotations run by another process
	rag     *rag.Store
	// knowledge joins memories and the RAG store (the agent's remember/recall/search_knowledge).
	knowledge *knowledge.Base
	// ownsRAG: New opened the store (no Deps.RAG), so Serve closes it.
	ownsRAG bool
	log     *slog.Logger
	signer  *auth.Signer
	hasher  *auth.Hasher
	mail    mail.Sender
	jobs    *scheduler.Runner
	tasks   *scheduler.Tasks
	revoked *revocationList
	limits  limits
	cop     *http.CrossOriginProtection
	routes  []*Route
	handler http.Handler
	started time.Time
	// runner runs agent turns (chat, resume, task runs) and streams them.
	runner *runner.Runner
	// metrics is the Prometheus registry (/metrics) the pipeline and engines feed.
	metrics *metrics
	// ready caches /readyz and owns its database write probe.
	ready readiness
	// connectorCount, set by the connector feature, feeds opsagent_connectors_connected.
	connectorCount atomic.Pointer[func() int]
	// auditLog is the batched, hash-chaining audit writer.
	auditLog *audit.Writer
	// Now is the server's clock; tests move it to cross time windows.
	Now func() time.Time
	// Webhooks (webhooks_*.go), approvals and incidents.
	wh               *pipeline.Pipeline
	approvalHandlers map[string]ApprovalHandler
	incidentArchiver IncidentArchiver
	// commandPolicies caches each project's compiled run_command policy.
	commandPolicies commandPolicies
	// connectors holds the connectors' live connections (connectors_ws.go).
	connectors *connector.Hub
	kubeCursor kubeCursor // when each cluster connector was last asked for changes (kubernetes_changes.go)
	// billing: plans, quotas, metering, Stripe (billing*.go); never nil.
	billing *billing.Service
	// taskPages caches encoded pages of GET /api/tasks (task_list_cache.go).
	taskPages *store.Cache[[]byte]
	// beyond: heartbeats, maintenance windows, postmortem drafts (beyond_state.go).
	beyond beyondState
	// investigator: the change feed's limits and the investigations' caches (changes.go).
	investigator investigatorState
	// evals run in the background until done or the server stops (evals.go).
	evalOnce   sync.Once
	evalCtx    context.Context
	evalCancel context.CancelFunc
	evalWG     sync.WaitGroup
	// chans holds the chat channels' open clients (channels_runtime.go).
	chans *channelHub
	// bg tracks work requests hand off to run after their answer (mail).
	bg sync.WaitGroup
	// stopping ends when shutdown begins; stream requests run under it.
	stopping    context.Context
	stopStreams context.CancelFunc
}

type limits struct {
	loginIP, loginEmail *ratelimit.Limiter
	mailPerAddr         *ratelimit.Limiter
	register            *ratelimit.Limiter
	clientEvents        *ratelimit.Limiter
	clientErrors        *ratelimit.Limiter
	refresh             *ratelimit.Limiter
	// agentTurns bounds chat and resume per caller: each starts model work.
	agentTurns *ratelimit.Limiter
	// knowledgeSync bounds full re-scans of the documents per organization.
	knowledgeSync *ratelimit.Limiter
	// keyMisses counts API keys that matched nothing, per client IP; past
	// the limit an opsk_ credential is refused before any lookup or hash.
	keyMisses *ratelimit.Limiter
}

// Deps are the opened parts the server is built from (main opens them in order).
type Deps struct {
	DB     *store.DB
	Vault  *vault.Vault
	RAG    *rag.Store // nil: New opens DATA_DIR/rag and Serve closes it
	Jobs   *scheduler.Runner
	Logger *slog.Logger
	// TaskExecutor runs task runs (the agent); nil fails them fast with the reason.
	TaskExecutor scheduler.Executor
}

// New builds the server: keys are loaded or generated under the data dir.
func New(cfg Config, d Deps) (*Server, error) {
	if cfg.AgentTurnsPerMinute == 0 {
		cfg.AgentTurnsPerMinute = DefaultAgentTurnsPerMinute
	}
	if cfg.WebhookMaxBodyBytes == 0 {
		cfg.WebhookMaxBodyBytes = DefaultWebhookMaxBody
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	key, err := loadOrCreateKey(cfg.Path("keys", "jwt.key"), 64)
	if err != nil {
		return nil, err
	}
	signer, err := auth.NewSigner(key)
	if err != nil {
		return nil, err
	}
	sender, err := mail.New(cfg.SMTPURL, cfg.MailFrom, cfg.Path("outbox"), d.Logger)
	if err != nil {
		return nil, err
	}
	if err := ensureDir(cfg.Path("avatars")); err != nil {
		return nil, err
	}
	if d.Vault == nil {
		// Tests and tools that build a server directly get the data dir's vault.
		v, err := vault.Open(cfg.Path("vault"), cfg.VaultPassphrase, d.Logger)
		if err != nil {
			return nil, fmt.Errorf("vault: %w", err)
		}
		d.Vault = v
	}
	ownsRAG := d.RAG == nil
	if ownsRAG {
		// On a shared database the documents are rows and DATA_DIR/rag holds
		// only this server's index, a cache of them (knowledge.Options).
		kb, err := rag.Open(context.Background(), cfg.Path("rag"), knowledge.Options(d.DB, rag.Options{Logger: d.Logger}))
		if err != nil {
			return nil, err
		}
		d.RAG = kb
	}
	s := &Server{
		rag: d.RAG, ownsRAG: ownsRAG,
		cfg: cfg, db: d.DB, log: d.Logger, signer: signer, hasher: auth.NewHasher(0), mail: sender,
		jobs: d.Jobs, started: time.Now().UTC(), Now: func() time.Time { return time.Now().UTC() },
		cop: http.NewCrossOriginProtection(),
	}
	s.taskPages = store.NewCache[[]byte](d.DB, taskPagesMax, store.GenTasks)
	s.metrics = newMetrics()
	s.metrics.reg.MustRegister(stateCollector{s}, retryCollector{s})
	s.knowledge = knowledge.New(d.DB, d.RAG)
	s.secrets = secrets.New(d.DB, d.Vault, cfg.Path("vault"), cfg.VaultPassphrase, d.Logger)
	s.stopping, s.stopStreams = context.WithCancel(context.Background())
	if cfg.BaseURL != "" {
		_ = s.cop.AddTrustedOrigin(trimSlash(cfg.BaseURL))
	}
	s.limits = limits{
		// Per address and per client IP, checked before any hashing.
		loginIP:    ratelimit.New(30, time.Minute),
		loginEmail: ratelimit.New(10, 5*time.Minute),
		// Mailing flows: no more than a few messages per address per hour.
		mailPerAddr:   ratelimit.New(5, time.Hour),
		register:      ratelimit.New(10, time.Hour),
		clientEvents:  ratelimit.New(100, time.Minute),
		clientErrors:  ratelimit.New(60, time.Minute),
		refresh:       ratelimit.New(120, time.Minute),
		agentTurns:    ratelimit.New(cfg.AgentTurnsPerMinute, time.Minute),
		knowledgeSync: ratelimit.New(KnowledgeSyncsPerMinute, time.Minute),
		keyMisses:     ratelimit.New(APIKeyMissesPer5Min, 5*time.Minute),
	}
	for _, l := range []*ratelimit.Limiter{s.limits.loginIP, s.limits.loginEmail, s.limits.mailPerAddr, s.limits.register, s.limits.clientEvents, s.limits.clientErrors, s.limits.refresh,
		s.limits.agentTurns, s.limits.knowledgeSync, s.limits.keyMisses} {
		l.Now = func() time.Time { return s.Now() }
	}
	s.revoked, err = loadRevocations(context.Background(), d.DB)
	if err != nil {
		return nil, err
	}
	s.auditLog = audit.New(d.DB, s.log)
	if err := s.installAgent(&d); err != nil {
		return nil, err
	}
	s.tasks = s.newTaskScheduler(d)
	s.installWebhooks()
	s.installToolApprovals()
	s.installConnectors()
	if err := s.installBilling(); err != nil {
		return nil, err
	}
	s.installChannels()
	s.routes = s.routeTable()
	s.installTenancy()
	s.handler = s.buildHandler()
	if d.Jobs != nil {
		if err := s.registerJobs(d.Jobs); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Secrets is the secret keeper the agent resolves secrets and LLM keys with.
func (s *Server) Secrets() *secrets.Keeper { return s.secrets }

// Knowledge is the memory and document API the agent's tools call.
func (s *Server) Knowledge() *knowledge.Base { return s.knowledge }

// Handler returns the root handler.
func (s *Server) Handler() http.Handler { return s.handler }

// Routes returns the route table (read-only by convention).
func (s *Server) Routes() []*Route { return s.routes }

// Serve runs the HTTP server on ln until ctx ends, then drains: streams
// (SSE, MCP) are told to end at once, ordinary requests get up to
// ShutdownTimeout to finish with their context intact, and only then is
// whatever is left cancelled and its connection closed.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	base, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       60 * time.Second,
		WriteTimeout:      0, // streams (SSE) write for as long as they live; handlers bound their own work
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return base },
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
	// Files edited by hand under DATA_DIR/rag reach the index while serving.
	s.rag.Start(base)
	reconciled := make(chan struct{})
	go func() {
		defer close(reconciled)
		s.reconcileMemories(base)
		s.sweepAtStart(base)
	}()
	if s.ownsRAG {
		defer s.rag.Close()
	}
	// The reconciliation writes into DATA_DIR/rag: it ends (cut short, once
	// everything else has stopped) before the knowledge store closes and
	// before Serve returns to whoever owns the store.
	defer func() {
		cancelBase()
		<-reconciled
	}()
	stopPprof, perr := s.servePprof()
	if perr != nil {
		return perr
	}
	defer stopPprof()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	go s.resumeRuns(base) // turns the last stop (or a dead server) cut, from their checkpoints
	stopTasks := s.startTasks(base)
	defer stopTasks()
	stopWebhooks := s.wh.Start() // stops after the HTTP drain: draining requests wait for its commits
	defer stopWebhooks()
	defer s.connectors.Close() // after the agent runs: their calls end as interrupted, not as "connector lost"
	defer s.runner.Stop()      // after the task runs: chat turns end failed (interrupted) and are saved
	defer s.stopEvals()        // evaluations in flight end interrupted, their outcome saved
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "timeout", s.cfg.ShutdownTimeout, "grace", s.cfg.ShutdownGrace)
	// Runs first, while requests are still served: new turns are refused
	// with 503, live ones end at their next checkpoint (runner.Drain).
	s.runner.Drain()
	s.stopStreams()
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout)
	defer cancel()
	err := hs.Shutdown(sctx)
	if err != nil {
		s.log.Warn("requests still running at the shutdown timeout; cancelling them", "err", err)
		cancelBase()
		err = hs.Close()
	}
	s.auditLog.Close()
	if e := <-errc; !errors.Is(e, http.ErrServerClosed) && e != nil {
		return e
	}
	s.bg.Wait() // mail handed off by the last requests (each bounded by laterTimeout)
	return err
}

// reconcileMemories repairs the memories collection from the memory rows
// (after a restore or a hand edit); it only logs, never stops the server.
func (s *Server) reconcileMemories(ctx context.Context) {
	fixed, removed, err := s.knowledge.Reconcile(ctx)
	switch {
	case err != nil && ctx.Err() == nil:
		s.log.Warn("knowledge: memory reconciliation failed", "err", err)
	case fixed+removed > 0:
		s.log.Info("knowledge: memories re-indexed", "fixed", fixed, "removed", removed)
	}
}

// isStream reports a request that expects a long-lived event stream (SSE,
// MCP streamable HTTP); such requests end as soon as shutdown begins.
func isStream(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/event-stream")
}

func loadOrCreateKey(path string, n int) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		if len(b) < 32 {
			return nil, errors.New(path + ": key file too short; remove it to generate a new one")
		}
		return b, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := ensureDir(dirOf(path)); err != nil {
		return nil, err
	}
	key := auth.RandomBytes(n)
	if err := writeFileAtomic(path, key, 0o600); err != nil {
		return nil, err
	}
	return key, nil
}

// SetClock replaces every clock the server reads (tokens, rows, rate limits);
// tests use it to cross time windows without sleeping.
func (s *Server) SetClock(now func() time.Time) {
	s.Now = now
	s.db.Now = now
	s.signer.Now = now
}
