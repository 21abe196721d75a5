// Package pipeline is the webhook engine: it verifies, redacts, normalizes
// and durably stores deliveries (Ingest, through one group-commit writer),
// then dispatches them (rules, correlation into incidents, task runs) from
// the durable queue, so an event acknowledged just before a crash is
// dispatched after the restart.
//
// It imports store, the webhook provider package, ratelimit and vault; the
// HTTP side (server) looks a webhook up, calls Ingest and answers its Ack.
package pipeline

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/server/telemetry"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Receiver limits (the body limit is the server's --webhook-max-body-bytes, on the route).
const (
	queueSize   = 8192      // deliveries waiting for the writer
	maxBatch    = queueSize // events per group commit: whatever is queued
	cacheTTL    = time.Second
	linger      = 5 * time.Millisecond // longest a group commit under load collects deliveries
	gap         = time.Millisecond     // ... or waits for the next one
	maxIdemKey  = 200
	maxHeaders  = 64
	maxHeaderSz = 1024
)

// RoutingFanOut is the routing mode in which every matching rule fires
// (otherwise the first match wins).
const RoutingFanOut = "fan_out"

// Unsealer decrypts a webhook's secrets (*secrets.Keeper does, following
// vault rotations run by another process).
type Unsealer interface {
	Unseal(aad string, ct []byte) ([]byte, error)
}

// Deps are what a Pipeline is built from.
type Deps struct {
	DB      *store.DB
	Secrets Unsealer
	// WakeTasks tells the task scheduler that runs were queued.
	WakeTasks func()
	// Archive files an incident a provider resolved (off the writer's goroutine).
	Archive func(ctx context.Context, inc *store.Incident)
	Logger  *slog.Logger
	Now     func() time.Time // the server's clock (tests move it)
	// Windows finds the active maintenance window an event falls under
	// (nil: no windows).
	Windows func(orgID, projectID, provider string, at time.Time, alerts []webhook.Alert) *store.WindowMatch
	// Telemetry hears of stored events, duplicates, verification failures
	// and each group commit (nil: nothing is reported).
	Telemetry telemetry.Webhooks
	// Dispatched hears what each dispatch pass started, after its commit
	// (nil: nobody): chat channels post the approvals and runs of rules.
	Dispatched func(ctx context.Context, outs []store.DispatchOutcome)
	// InlineMax is the largest group commit whose events are dispatched in
	// it (0: inlineMax; see flow.go). Tests lower it to exercise the
	// dispatcher's queue.
	InlineMax int
}

// Pipeline is the receiver's state: the config cache, the ingest queue and
// its single writer, the dispatcher wake-up and the verification failure
// counters.
type Pipeline struct {
	d       Deps
	log     *slog.Logger
	mu      sync.Mutex
	cache   map[string]*Hook
	loading map[string]*hookLoad      // reloads under way (Lookup), guarded by mu
	configs map[string]dispatchConfig // the dispatcher's (dispatch_config.go), guarded by mu
	queue   chan ingestReq
	// arriving counts deliveries between Ingest's start and their place
	// in queue: the writer lingers for company only while some are on
	// their way (writer.go).
	arriving atomic.Int32
	wake     chan struct{}
	wg       sync.WaitGroup
	running  bool
	fails    map[string]Failures
	// dispatchMu: one dispatch pass at a time (loop, tests, replays).
	dispatchMu sync.Mutex
	conds      sync.Map // compiled conditions, keyed by rule id and version
	// parsed hands each committed event's normalized form to the
	// dispatcher so it does not decode the body a second time; events it
	// lacks (after a restart, or past the bound) are parsed from the store.
	parsedMu sync.Mutex
	parsed   map[string]webhook.Event
	// archive: incidents resolved in the ingest transaction, archived by
	// the dispatcher goroutine (guarded by parsedMu).
	archive []*store.Incident
	// flowMu guards where events are dispatched (flow.go).
	flowMu    sync.Mutex
	backlog   bool
	deferring bool
	deferGen  uint64
	batchN    int // events of the next dispatch transaction (under dispatchMu)
}

// New builds a pipeline; Start runs its writer and dispatcher.
func New(d Deps) *Pipeline {
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	if d.Now == nil {
		d.Now = func() time.Time { return time.Now().UTC() }
	}
	if d.WakeTasks == nil {
		d.WakeTasks = func() {}
	}
	if d.Archive == nil {
		d.Archive = func(context.Context, *store.Incident) {}
	}
	if d.Telemetry == nil {
		d.Telemetry = telemetry.Nop{}
	}
	if d.InlineMax <= 0 {
		d.InlineMax = inlineMax
	}
	return &Pipeline{d: d, log: d.Logger, cache: map[string]*Hook{}, loading: map[string]*hookLoad{}, configs: map[string]dispatchConfig{}, queue: make(chan ingestReq, queueSize),
		wake: make(chan struct{}, 1), fails: map[string]Failures{}, parsed: map[string]webhook.Event{},
		backlog: true, batchN: minDispatch}
}

// Start runs the ingest writer and the dispatcher until the returned stop
// is called. They use their own context, not the server's base context:
// requests drain during shutdown and still need the writer to answer them.
func (p *Pipeline) Start() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	p.mu.Lock()
	p.running = true
	p.mu.Unlock()
	p.wg.Add(2)
	go func() { defer p.wg.Done(); p.writer(ctx) }()
	go func() { defer p.wg.Done(); p.dispatcher(ctx) }()
	p.kick()
	return func() {
		cancel()
		p.wg.Wait()
	}
}

func (p *Pipeline) kick() {
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// ErrNotFound is the one answer for an unknown task, another tenant's task
// without a webhook, a disabled webhook and a disabled task: the receiver
// never tells them apart.
var ErrNotFound = store.NotFound("webhook")

// Hook is a webhook as the receiver needs it: decrypted secrets and its
// rate limiter, cached for a second so a delivery costs no vault decryption
// and no extra read. Management writes drop the entry at once (Forget).
type Hook struct {
	Webhook *store.Webhook
	Secrets [][]byte // current, then previous while its overlap lasts
	loaded  time.Time
	limiter *ratelimit.Limiter
	// cur, prev: the plaintexts of Webhook.SecretCT and PrevSecretCT (nil
	// when absent), reused by the next reload while the row still holds the
	// same ciphertexts: every webhook reloads each cacheTTL, and each
	// decryption allocated about 130 KB (age's stream buffers), a twentieth
	// of all the bytes allocated under ingest load.
	cur, prev []byte
}

// Forget drops a webhook from the cache after a management write.
func (p *Pipeline) Forget(taskID string) {
	p.mu.Lock()
	delete(p.cache, taskID)
	delete(p.configs, taskID)
	delete(p.loading, taskID)
	p.mu.Unlock()
}

// Lookup returns the receiver's view of a task's webhook, or ErrNotFound
// when it does not exist or is disabled.
//
// Deliveries that miss the cache while a reload of the same webhook is under
// way wait for that reload instead of each reading and decrypting the row
// again: under load every expiry found a handful of requests in the window
// of one reload. Forget drops the reload under way, so a request after a
// management write reads the row again.
func (p *Pipeline) Lookup(ctx context.Context, taskID string) (*Hook, error) {
	now := p.d.Now()
	p.mu.Lock()
	st := p.cache[taskID]
	if st != nil && now.Sub(st.loaded) < cacheTTL {
		p.mu.Unlock()
		return st.check()
	}
	if l := p.loading[taskID]; l != nil {
		p.mu.Unlock()
		select {
		case <-l.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		switch {
		case l.err == nil && l.st != nil:
			return l.st.check()
		case l.err != nil && (ctx.Err() != nil || !errors.Is(l.err, context.Canceled) && !errors.Is(l.err, context.DeadlineExceeded)):
			return nil, l.err
		}
		// The reload died with its own request (its context, a panic): read
		// the row ourselves.
		return p.load(ctx, taskID, now, st)
	}
	l := &hookLoad{done: make(chan struct{})}
	p.loading[taskID] = l
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		if p.loading[taskID] == l {
			delete(p.loading, taskID)
		}
		p.mu.Unlock()
		close(l.done)
	}()
	l.st, l.err = p.load(ctx, taskID, now, st)
	return l.st, l.err
}

// hookLoad is a reload of a webhook under way; done closes when st (or
// err) is set.
type hookLoad struct {
	done chan struct{}
	st   *Hook
	err  error
}

// load reads and decrypts a webhook and caches it; old is the expired
// entry (nil when none), whose plaintexts and limiter are reused.
func (p *Pipeline) load(ctx context.Context, taskID string, now time.Time, st *Hook) (*Hook, error) {
	h, err := p.d.DB.FindWebhookForIngest(ctx, taskID)
	if store.IsNotFound(err) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	fresh, err := p.secrets(h, now, st)
	if errors.Is(err, vault.ErrNoMatchingKey) {
		// A vault rotation re-encrypted the row and retired its key
		// between the read and the decryption: the row read now is current.
		if h, err = p.d.DB.FindWebhookForIngest(ctx, taskID); err != nil {
			return nil, err
		}
		fresh, err = p.secrets(h, now, st)
	}
	if err != nil {
		return nil, err
	}
	lim := ratelimit.New(max(h.RateLimit, 1), time.Minute)
	lim.Now = func() time.Time { return p.d.Now() }
	p.mu.Lock()
	if old := p.cache[taskID]; old != nil && old.limiter.Limit == lim.Limit {
		lim = old.limiter // keep the window's counts across reloads
	}
	st = &Hook{Webhook: h, Secrets: fresh.list, loaded: now, limiter: lim, cur: fresh.cur, prev: fresh.prev}
	p.cache[taskID] = st
	p.mu.Unlock()
	return st.check()
}

func (st *Hook) check() (*Hook, error) {
	if !st.Webhook.Enabled || !st.Webhook.TaskEnabled {
		return nil, ErrNotFound
	}
	return st, nil
}

// secrets decrypts the current secret and, while its overlap lasts, the
// previous one.
// unsealed is what secrets decrypted: the verification list and both
// plaintexts for the next reload.
type unsealed struct {
	list      [][]byte
	cur, prev []byte
}

// secrets decrypts the webhook's secrets, reusing old's plaintexts for
// ciphertexts that did not change (same bytes under the same task's AAD:
// the same plaintext; a rotation writes new ciphertexts).
func (p *Pipeline) secrets(h *store.Webhook, now time.Time, old *Hook) (unsealed, error) {
	var out unsealed
	aad := AAD(h.TaskID)
	unseal := func(ct []byte) ([]byte, error) {
		if old != nil && old.Webhook.TaskID == h.TaskID {
			if old.cur != nil && bytes.Equal(ct, old.Webhook.SecretCT) {
				return old.cur, nil
			}
			if old.prev != nil && bytes.Equal(ct, old.Webhook.PrevSecretCT) {
				return old.prev, nil
			}
		}
		return p.d.Secrets.Unseal(aad, ct)
	}
	if len(h.SecretCT) > 0 {
		pt, err := unseal(h.SecretCT)
		if err != nil {
			return out, err
		}
		out.cur = pt
		out.list = append(out.list, pt)
	}
	if len(h.PrevSecretCT) > 0 && h.PrevValidUntil != nil && now.Before(*h.PrevValidUntil) {
		pt, err := unseal(h.PrevSecretCT)
		if err != nil {
			return out, err
		}
		out.prev = pt
		out.list = append(out.list, pt)
	}
	return out, nil
}

// AAD binds a webhook secret's ciphertext to its task.
func AAD(taskID string) string { return "webhook:" + taskID }

// Failures counts a webhook's failed verifications since the server started.
type Failures struct {
	Count int
	At    time.Time
	Code  string
}

func (p *Pipeline) recordFailure(taskID string, code webhook.Code, now time.Time) {
	p.d.Telemetry.VerificationFailed()
	p.mu.Lock()
	f := p.fails[taskID]
	f.Count++
	f.At, f.Code = now, string(code)
	p.fails[taskID] = f
	p.mu.Unlock()
}

// Failures reports a webhook's failed verifications.
func (p *Pipeline) Failures(taskID string) Failures {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fails[taskID]
}
