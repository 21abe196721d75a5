package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/server/ratelimit"
	"github.com/opsagent/opsagent/server/webhook"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// Receiver limits.
const (
	webhookQueue       = 8192         // deliveries waiting for the writer
	webhookMaxBatch    = webhookQueue // events per group commit: whatever is queued
	webhookCacheTTL    = time.Second
	webhookLinger      = 5 * time.Millisecond // longest a group commit under load collects deliveries
	webhookGap         = time.Millisecond     // ... or waits for the next one
	webhookMaxIdemKey  = 200
	webhookMaxHeaders  = 64
	webhookMaxHeaderSz = 1024
)

// errWebhookNotFound is the one answer for an unknown task, another
// tenant's task without a webhook, a disabled webhook and a disabled task:
// the receiver never tells them apart.
var errWebhookNotFound = store.NotFound("webhook")

// hookState is a webhook as the receiver needs it: decrypted secrets and
// compiled rules, cached for webhookCacheTTL so a delivery costs no vault
// decryption and no extra read. Management writes drop the entry at once.
type hookState struct {
	hook    *store.Webhook
	secrets [][]byte // current, then previous while its overlap lasts
	loaded  time.Time
	limiter *ratelimit.Limiter
}

// ingestReq is one verified delivery waiting for the group commit, with
// its normalized form for the dispatcher.
type ingestReq struct {
	item   store.IngestItem
	parsed webhook.Event
	done   chan ingestRes
}

type ingestRes struct {
	res store.IngestResult
	err error
}

// webhookService is the receiver's state: the config cache, the ingest
// queue and its single writer, the dispatcher wake-up and the verification
// failure counters.
type webhookService struct {
	s       *Server
	mu      sync.Mutex
	cache   map[string]*hookState
	queue   chan ingestReq
	wake    chan struct{}
	stop    context.CancelFunc
	wg      sync.WaitGroup
	running bool
	fails   map[string]verifyFailure
	// dispatchMu: one dispatch pass at a time (loop, tests, replays).
	dispatchMu sync.Mutex
	conds      conditionCache
	// parsed hands each committed event's normalized form to the
	// dispatcher so it does not decode the body a second time; events it
	// lacks (after a restart, or past the bound) are parsed from the store.
	parsedMu sync.Mutex
	parsed   map[string]webhook.Event
	// archive: incidents resolved in the ingest transaction, archived by
	// the dispatcher goroutine (guarded by parsedMu).
	archive []*store.Incident
}

// maxHandOff bounds the parsed events waiting for the dispatcher.
const maxHandOff = 4 * webhookQueue

// handOff keeps the parsed form of the batch's events that wait for the
// dispatcher and reports whether there are any.
func (w *webhookService) handOff(batch []ingestReq, res []store.IngestResult) (pending bool) {
	w.parsedMu.Lock()
	defer w.parsedMu.Unlock()
	for i, r := range batch {
		if res[i].Err != nil || res[i].Duplicate != "" || res[i].Dispatched != nil {
			continue
		}
		pending = true
		if len(w.parsed) < maxHandOff {
			w.parsed[res[i].ID] = r.parsed
		}
	}
	return pending
}

func (w *webhookService) takeParsed(id string) (webhook.Event, bool) {
	w.parsedMu.Lock()
	defer w.parsedMu.Unlock()
	ev, ok := w.parsed[id]
	if ok {
		delete(w.parsed, id)
	}
	return ev, ok
}

type verifyFailure struct {
	Count int
	At    time.Time
	Code  string
}

func newWebhookService(s *Server) *webhookService {
	return &webhookService{s: s, cache: map[string]*hookState{}, queue: make(chan ingestReq, webhookQueue),
		wake: make(chan struct{}, 1), fails: map[string]verifyFailure{}, parsed: map[string]webhook.Event{}}
}

// start runs the ingest writer and the dispatcher until the returned stop
// is called. They use their own context, not the server's base context:
// requests drain during shutdown and still need the writer to answer them.
func (w *webhookService) start() func() {
	ctx, cancel := context.WithCancel(context.Background())
	w.mu.Lock()
	w.stop, w.running = cancel, true
	w.mu.Unlock()
	w.wg.Add(2)
	go func() { defer w.wg.Done(); w.writer(ctx) }()
	go func() { defer w.wg.Done(); w.dispatcher(ctx) }()
	w.kick()
	return func() {
		cancel()
		w.wg.Wait()
	}
}

func (w *webhookService) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// forget drops a webhook from the cache after a management write.
func (w *webhookService) forget(taskID string) {
	w.mu.Lock()
	delete(w.cache, taskID)
	w.mu.Unlock()
}

// lookup returns the receiver's view of a task's webhook, or
// errWebhookNotFound when it does not exist or is disabled.
func (w *webhookService) lookup(ctx context.Context, taskID string) (*hookState, error) {
	now := w.s.Now()
	w.mu.Lock()
	st := w.cache[taskID]
	w.mu.Unlock()
	if st != nil && time.Since(st.loaded) < webhookCacheTTL {
		return st.check()
	}
	h, err := w.s.db.FindWebhookForIngest(ctx, taskID)
	if store.IsNotFound(err) {
		return nil, errWebhookNotFound
	}
	if err != nil {
		return nil, err
	}
	secrets, err := w.s.webhookSecrets(h, now)
	if errors.Is(err, vault.ErrNoMatchingKey) {
		// A vault rotation re-encrypted the row and retired its key
		// between the read and the decryption: the row read now is current.
		if h, err = w.s.db.FindWebhookForIngest(ctx, taskID); err != nil {
			return nil, err
		}
		secrets, err = w.s.webhookSecrets(h, now)
	}
	if err != nil {
		return nil, err
	}
	lim := ratelimit.New(max(h.RateLimit, 1), time.Minute)
	lim.Now = func() time.Time { return w.s.Now() }
	w.mu.Lock()
	if old := w.cache[taskID]; old != nil && old.limiter.Limit == lim.Limit {
		lim = old.limiter // keep the window's counts across reloads
	}
	st = &hookState{hook: h, secrets: secrets, loaded: time.Now(), limiter: lim}
	w.cache[taskID] = st
	w.mu.Unlock()
	return st.check()
}

func (st *hookState) check() (*hookState, error) {
	if !st.hook.Enabled || !st.hook.TaskEnabled {
		return nil, errWebhookNotFound
	}
	return st, nil
}

// webhookSecrets decrypts the current secret and, while its overlap lasts,
// the previous one, through the keeper, which follows vault rotations run by
// another process.
func (s *Server) webhookSecrets(h *store.Webhook, now time.Time) ([][]byte, error) {
	var out [][]byte
	aad := webhookAAD(h.TaskID)
	if len(h.SecretCT) > 0 {
		pt, err := s.secrets.Unseal(aad, h.SecretCT)
		if err != nil {
			return nil, err
		}
		out = append(out, pt)
	}
	if len(h.PrevSecretCT) > 0 && h.PrevValidUntil != nil && now.Before(*h.PrevValidUntil) {
		pt, err := s.secrets.Unseal(aad, h.PrevSecretCT)
		if err != nil {
			return nil, err
		}
		out = append(out, pt)
	}
	return out, nil
}

func webhookAAD(taskID string) string { return "webhook:" + taskID }

// writer is the single ingest writer: it takes whatever deliveries are
// queued (up to webhookMaxBatch), stores them in one transaction, which
// the store commits with synchronous=FULL, then answers every waiter. Under
// load one fsync acknowledges hundreds of deliveries (group commit); idle,
// a lone delivery is committed at once without waiting for company.
func (w *webhookService) writer(ctx context.Context) {
	batch := make([]ingestReq, 0, webhookMaxBatch)
	items := make([]store.IngestItem, 0, webhookMaxBatch)
	linger := time.NewTimer(time.Hour)
	linger.Stop()
	prev := 0 // deliveries in the previous commit
	for {
		batch, items = batch[:0], items[:0]
		select {
		case <-ctx.Done():
			w.drainQueue()
			return
		case r := <-w.queue:
			batch = append(batch, r)
		}
	fill:
		for len(batch) < webhookMaxBatch {
			select {
			case r := <-w.queue:
				batch = append(batch, r)
			default:
				break fill
			}
		}
		// Group commit under load (the previous commit held several
		// deliveries): keep collecting while deliveries keep arriving, at
		// most webhookGap apart and webhookLinger in all. A commit's own
		// CPU (about 0.7 ms here: a dozen hot pages written to the WAL, an
		// fsync) dwarfs a delivery's share (about 15 µs; see store's
		// BenchmarkIngestGroupCommit), so on a busy machine waiting a few
		// milliseconds cuts the CPU per delivery and raises throughput; the
		// writer sleeps meanwhile. Idle, a lone delivery commits at once.
		if prev > 1 {
			deadline := time.Now().Add(webhookLinger)
		wait:
			for len(batch) < webhookMaxBatch {
				d := min(webhookGap, time.Until(deadline))
				if d <= 0 {
					break
				}
				linger.Reset(d)
				select {
				case r := <-w.queue:
					batch = append(batch, r)
					linger.Stop()
				case <-linger.C:
					break wait
				}
			}
		}
		prev = len(batch)
		for _, r := range batch {
			items = append(items, r.item)
		}
		// A context that cannot end: the batch must commit or fail on its
		// own (its senders wait for the outcome, even during shutdown), and
		// a cancellable one costs the driver a watcher goroutine for every
		// statement, a large share of the writer's CPU.
		res, err := w.s.db.InsertWebhookEvents(context.WithoutCancel(ctx), items)
		var pending bool
		if err == nil {
			pending = w.handOff(batch, res) // before the waiters hear, so before any dispatch
		}
		for i, r := range batch {
			if err != nil {
				r.done <- ingestRes{err: err}
				continue
			}
			r.done <- ingestRes{res: res[i]}
		}
		if err != nil {
			w.s.log.Error("webhook ingest commit failed", "events", len(batch), "err", err)
			continue
		}
		w.dispatched(res)
		if pending {
			w.kick()
		}
	}
}

// dispatched follows up on events dispatched in the ingest transaction:
// the task scheduler hears of new runs, and incidents a provider resolved
// are archived by the dispatcher goroutine (never on the writer's).
func (w *webhookService) dispatched(res []store.IngestResult) {
	runs, archive := false, false
	for _, r := range res {
		if r.Dispatched == nil {
			continue
		}
		for _, it := range r.Dispatched.Items {
			runs = runs || it.Kind == "run"
		}
		if r.Dispatched.Resolved != nil {
			w.parsedMu.Lock()
			w.archive = append(w.archive, r.Dispatched.Resolved)
			w.parsedMu.Unlock()
			archive = true
		}
	}
	if runs {
		w.s.tasks.Wake()
	}
	if archive {
		w.kick()
	}
}

// archivePending archives the incidents the writer resolved.
func (w *webhookService) archivePending(ctx context.Context) {
	w.parsedMu.Lock()
	incs := w.archive
	w.archive = nil
	w.parsedMu.Unlock()
	for _, inc := range incs {
		w.s.archiveIncident(ctx, inc)
	}
}

// drainQueue answers deliveries still queued at stop; they were never
// acknowledged, so the sender retries.
func (w *webhookService) drainQueue() {
	for {
		select {
		case r := <-w.queue:
			r.done <- ingestRes{err: errIngestStopped}
		default:
			return
		}
	}
}

var errIngestStopped = &store.Error{Code: store.EInternal, Message: "the server is stopping; retry the delivery"}

// submit queues a delivery and waits until it is committed.
func (w *webhookService) submit(ctx context.Context, item store.IngestItem, parsed webhook.Event) (store.IngestResult, error) {
	w.mu.Lock()
	running := w.running
	w.mu.Unlock()
	if !running {
		// Not serving (tools that build a server without Serve): commit directly.
		res, err := w.s.db.InsertWebhookEvents(ctx, []store.IngestItem{item})
		if err != nil {
			return store.IngestResult{}, err
		}
		w.dispatched(res)
		return res[0], nil
	}
	req := ingestReq{item: item, parsed: parsed, done: make(chan ingestRes, 1)}
	select {
	case w.queue <- req:
	case <-ctx.Done():
		return store.IngestResult{}, ctx.Err()
	}
	// Once queued, wait for the commit even if the client went away: the
	// outcome must be known before anything else is said about this event.
	r := <-req.done
	return r.res, r.err
}

func (w *webhookService) recordFailure(taskID string, code webhook.Code, now time.Time) {
	w.mu.Lock()
	f := w.fails[taskID]
	f.Count++
	f.At, f.Code = now, string(code)
	w.fails[taskID] = f
	w.mu.Unlock()
}

func (w *webhookService) failures(taskID string) verifyFailure {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fails[taskID]
}

// WebhookAck answers an accepted delivery (202).
type WebhookAck struct {
	EventID   string `json:"event_id" doc:"the stored event (for a duplicate: the event it duplicates)"`
	Status    string `json:"status" doc:"accepted, or duplicate when the delivery was stored before"`
	Duplicate string `json:"duplicate,omitempty" doc:"idempotency_key or dedupe when this delivery was not stored again"`
}

// handleWebhookReceive is POST /api/webhooks/{task_id}: verify, redact,
// normalize, store durably (group commit), acknowledge, dispatch later.
func (s *Server) handleWebhookReceive(c *Ctx) error {
	taskID, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	st, err := s.wh.lookup(c.Context(), taskID)
	if err != nil {
		return err
	}
	body, err := readBody(c.R, c.Route.MaxBody)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badRequest("body_unreadable", "could not read the request body")
	}
	ack, err := s.ingest(c.Context(), st, c.R.Header, body, ingestOpts{})
	if err != nil {
		return err
	}
	return c.JSON(http.StatusAccepted, ack)
}

// readBody reads the request body into one buffer of Content-Length bytes
// when the sender gave it, not a buffer grown and copied from 512 bytes.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.ContentLength <= 0 || r.ContentLength > limit {
		return io.ReadAll(r.Body)
	}
	// net/http ends the body at Content-Length and reports a shorter one
	// as io.ErrUnexpectedEOF.
	buf := make([]byte, r.ContentLength)
	if _, err := io.ReadFull(r.Body, buf); err != nil {
		return nil, err
	}
	return buf, nil
}

type ingestOpts struct {
	test         bool   // a test delivery from the management API
	replayOf     string // the event this one replays
	skipVerify   bool   // replays: the original was verified
	verification string
}

// ingest is the receiver's pipeline after the lookup; test deliveries and
// replays go through it too, so what they prove is what live traffic gets.
func (s *Server) ingest(ctx context.Context, st *hookState, h http.Header, body []byte, o ingestOpts) (*WebhookAck, error) {
	hook := st.hook
	now := s.Now()
	verification := o.verification
	if !o.skipVerify {
		if err := webhook.Verify(webhook.Scheme(hook.Scheme), st.secrets, h, body, now); err != nil {
			code := webhook.ErrorCode(err)
			s.wh.recordFailure(hook.TaskID, code, now)
			return nil, &store.Error{Code: store.EUnauthorized, Message: err.Error(), Reason: string(code)}
		}
		verification = hook.Scheme
	}
	if !o.test && o.replayOf == "" {
		if ok, retry := st.limiter.Allow(hook.TaskID); !ok {
			return nil, &RateLimitError{RetryAfter: retry}
		}
	}
	idem := strings.TrimSpace(h.Get("X-Idempotency-Key"))
	if len(idem) > webhookMaxIdemKey || strings.ContainsFunc(idem, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return nil, invalid("X-Idempotency-Key must be at most 200 printable characters", "value_error", "header", "x-idempotency-key")
	}
	sum := sha256.Sum256(body)
	ev := &store.WebhookEvent{ID: store.NewID(), OrgID: hook.OrgID, ProjectID: hook.ProjectID, TaskID: hook.TaskID,
		Provider: hook.Provider, IdemKey: idem, BodyHash: hex.EncodeToString(sum[:]), Verification: verification,
		BodySize: len(body), Test: o.test, ReplayOf: o.replayOf}
	// One decode per delivery when no redaction is configured: Parse
	// validates the JSON as it decodes it. With globs, the redacted copy
	// is what gets parsed, so normalized alerts never hold a redacted value.
	stored, parsed, err := redactAndParse(hook, h, body)
	switch {
	case err == nil:
		ev.Type = parsed.Type
		alerts, _ := json.Marshal(parsed.Alerts)
		ev.Alerts = string(alerts)
	case hook.Provider == string(webhook.ProviderGeneric) && webhook.ErrorCode(err) == webhook.CodeInvalidPayload && !json.Valid(body):
		// The generic provider keeps what it cannot read as raw text:
		// redaction globs cannot apply, so the body is stored as received.
		stored, ev.Raw, ev.Type, ev.Alerts = body, true, "generic.raw", "[]"
		parsed = webhook.Event{Provider: webhook.ProviderGeneric, Type: ev.Type, Alerts: []webhook.Alert{}}
	default:
		return nil, webhookInvalid(err)
	}
	ev.Body = stored
	ev.Headers = storedHeaders(h)
	// The plan is made here, on the request's goroutine; the writer applies
	// it in the ingest transaction when the webhook has no rules.
	plan := s.wh.planEvent(ev, hook, nil, parsed, nil)
	item := store.IngestItem{Event: ev, Plan: &plan, HookUpdatedAt: hook.UpdatedAt}
	if o.replayOf == "" && !o.test {
		item.DedupeWindow = time.Duration(hook.DedupeSeconds) * time.Second
	}
	res, err := s.wh.submit(ctx, item, parsed)
	if err != nil {
		return nil, err
	}
	if res.Err != nil {
		if store.IsNotFound(res.Err) {
			s.wh.forget(hook.TaskID)
			return nil, errWebhookNotFound
		}
		return nil, res.Err
	}
	if res.Duplicate != "" {
		return &WebhookAck{EventID: res.ID, Status: "duplicate", Duplicate: res.Duplicate}, nil
	}
	return &WebhookAck{EventID: res.ID, Status: "accepted"}, nil
}

// redactAndParse applies the webhook's redaction globs (when it has any)
// and normalizes the result.
func redactAndParse(hook *store.Webhook, h http.Header, body []byte) ([]byte, webhook.Event, error) {
	stored := body
	if len(hook.RedactGlobs) > 0 {
		var err error
		if stored, err = webhook.Redact(body, hook.RedactGlobs); err != nil {
			return nil, webhook.Event{}, err
		}
	}
	ev, err := webhook.Parse(webhook.Provider(hook.Provider), h, stored)
	return stored, ev, err
}

// webhookInvalid turns a payload error into the 422 shape.
func webhookInvalid(err error) error {
	return invalid(err.Error(), "value_error.webhook_payload", "body")
}

// storedHeaders keeps the non-credential headers of a delivery, bounded.
func storedHeaders(h http.Header) string {
	out := map[string]string{}
	for name, vals := range h {
		if webhook.IsCredentialHeader(name) || len(out) == webhookMaxHeaders {
			continue
		}
		v := strings.Join(vals, ", ")
		if len(v) > webhookMaxHeaderSz {
			v = v[:webhookMaxHeaderSz]
		}
		out[strings.ToLower(name)] = v
	}
	b, _ := json.Marshal(out)
	return string(b)
}
