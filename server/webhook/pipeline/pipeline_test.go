package pipeline_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/server/webhook/pipeline"
	"github.com/opsagent/opsagent/store"
	"github.com/opsagent/opsagent/vault"
)

// These tests drive the engine alone: a real store and vault in a temp
// dir, a webhook saved as the management API saves it, and deliveries
// handed to Ingest as the receiver hands them.

const secret = "whsec-pipeline-unit-test"

type env struct {
	db       *store.DB
	p        *pipeline.Pipeline
	task     string
	org      string
	project  string
	woken    atomic.Int32
	mu       sync.Mutex
	archived []string
	deps     pipeline.Deps
}

func newEnv(t *testing.T, configure func(h *store.Webhook)) *env {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	v, err := vault.Open(filepath.Join(dir, "vault"), "unit-test-passphrase", nil)
	if err != nil {
		t.Fatal(err)
	}
	keeper := secrets.New(db, v, filepath.Join(dir, "vault"), "unit-test-passphrase", nil)
	e := &env{db: db}
	u := &store.User{Email: "ada@example.com", Name: "Ada"}
	o, err := db.CreateAccount(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	p := &store.Project{OrgID: o.ID, Name: "payments"}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	task := &store.Task{OrgID: o.ID, ProjectID: p.ID, Name: "triage", Prompt: "Triage the alert.", AgentType: "sre",
		Timezone: "UTC", Enabled: true, MissedFirePolicy: "skip", OverlapPolicy: "queue", TimeoutSeconds: 600,
		MaxSteps: 10, CreatedBy: u.ID}
	if err := db.CreateTask(ctx, task, func(*store.Task, time.Time) (*time.Time, error) { return nil, nil }); err != nil {
		t.Fatal(err)
	}
	e.task, e.org, e.project = task.ID, o.ID, p.ID
	h := &store.Webhook{TaskID: e.task, OrgID: e.org, ProjectID: e.project, Provider: "alertmanager", Scheme: "bearer",
		Enabled: true, RoutingMode: "first_match", RateLimit: 600, DedupeSeconds: 60, RetentionDays: 30,
		RedactGlobs: []string{}, CorrelationWindow: 3600, ApprovalTTL: 86400, Correlate: true, BadgeToken: "badge"}
	if configure != nil {
		configure(h)
	}
	_, err = db.SaveWebhook(ctx, h, func(w, _ *store.Webhook) error {
		ct, kid, err := keeper.Seal(pipeline.AAD(e.task), []byte(secret))
		w.SecretCT, w.SecretKeyID = ct, kid
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	e.deps = pipeline.Deps{DB: db, Secrets: keeper, WakeTasks: func() { e.woken.Add(1) },
		Archive: func(_ context.Context, inc *store.Incident) {
			e.mu.Lock()
			e.archived = append(e.archived, inc.ID)
			e.mu.Unlock()
		}}
	e.p = pipeline.New(e.deps)
	return e
}

func alert(group, status string) []byte {
	return []byte(`{"version":"4","groupKey":"` + group + `","status":"` + status + `","receiver":"opsagent",
		"groupLabels":{"alertname":"HighLatency"},"commonLabels":{"alertname":"HighLatency","severity":"critical"},
		"commonAnnotations":{},"externalURL":"http://am:9093","alerts":[{"status":"` + status + `",
		"labels":{"alertname":"HighLatency","severity":"critical"},"annotations":{"summary":"p99 above 2s"},
		"startsAt":"2024-05-01T10:00:00Z","endsAt":"0001-01-01T00:00:00Z","generatorURL":"","fingerprint":"fp-1"}]}`)
}

func signed(extra ...string) http.Header {
	h := http.Header{"Authorization": {"Bearer " + secret}, "Content-Type": {"application/json"}}
	for i := 0; i+1 < len(extra); i += 2 {
		h.Set(extra[i], extra[i+1])
	}
	return h
}

func (e *env) ingest(t *testing.T, h http.Header, body []byte) (*pipeline.Ack, error) {
	t.Helper()
	hook, err := e.p.Lookup(context.Background(), e.task)
	if err != nil {
		t.Fatal(err)
	}
	return e.p.Ingest(context.Background(), hook, h, body, pipeline.Opts{})
}

// Refusals say why, in types the HTTP side maps (401, 422, 404), and
// count verification failures; nothing refused is stored.
func TestIngestRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	if _, err := e.p.Lookup(context.Background(), store.NewID()); !errors.Is(err, pipeline.ErrNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	var se *store.Error
	if _, err := e.ingest(t, http.Header{"Authorization": {"Bearer wrong"}}, alert("g", "firing")); !errors.As(err, &se) || se.Code != store.EUnauthorized {
		t.Fatalf("bad secret: %v", err)
	}
	if f := e.p.Failures(e.task); f.Count != 1 || f.Code == "" {
		t.Fatalf("failures %+v", f)
	}
	var inv *pipeline.Invalid
	if _, err := e.ingest(t, signed(), []byte("not json")); !errors.As(err, &inv) || inv.Loc[0] != "body" {
		t.Fatalf("not JSON: %v", err)
	}
	if _, err := e.ingest(t, signed("X-Idempotency-Key", "bad\x01key"), alert("g", "firing")); !errors.As(err, &inv) || inv.Loc[0] != "header" {
		t.Fatalf("control character in the idempotency key: %v", err)
	}
	if _, n, err := e.db.FindWebhookEvents(context.Background(), store.WebhookEventFilter{OrgID: e.org, ProjectID: e.project, TaskID: e.task, Limit: 10}); err != nil || n != 0 {
		t.Fatalf("%d events stored after refusals (%v)", n, err)
	}
	if n := pipeline.Arriving(e.p); n != 0 {
		t.Fatalf("%d refused deliveries still counted as on their way to the writer", n)
	}
}

// The rate limit answers RateLimited with when to come back.
func TestIngestRateLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(h *store.Webhook) { h.RateLimit, h.DedupeSeconds = 2, 0 })
	for i := 0; i < 2; i++ {
		if _, err := e.ingest(t, signed(), alert(fmt.Sprint("g", i), "firing")); err != nil {
			t.Fatal(err)
		}
	}
	var rl *pipeline.RateLimited
	if _, err := e.ingest(t, signed(), alert("g9", "firing")); !errors.As(err, &rl) || rl.RetryAfter <= 0 {
		t.Fatalf("third delivery: %v", err)
	}
	if n := pipeline.Arriving(e.p); n != 0 { // two committed without the writer, one refused
		t.Fatalf("%d deliveries still counted as on their way to the writer", n)
	}
}

// Concurrent deliveries through the running writer are each stored once,
// acknowledged with their own event id; a repeated idempotency key is a
// duplicate of the first.
func TestIngestGroupCommitStoresEachDeliveryOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(h *store.Webhook) { h.DedupeSeconds, h.Correlate = 0, false })
	stop := e.p.Start()
	const n = 200
	ids := make(chan string, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ack, err := e.ingest(t, signed("X-Idempotency-Key", fmt.Sprint("k", i)), alert(fmt.Sprint("g", i), "firing"))
			if err != nil || ack.Duplicate != "" {
				t.Errorf("delivery %d: %+v %v", i, ack, err)
				return
			}
			ids <- ack.EventID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("event id %s acknowledged twice", id)
		}
		seen[id] = true
	}
	dup, err := e.ingest(t, signed("X-Idempotency-Key", "k7"), alert("g7", "firing"))
	if err != nil || dup.Duplicate != "idempotency_key" {
		t.Fatalf("repeated key: %+v %v", dup, err)
	}
	// Deliveries arriving together may be left to the dispatcher (flow.go),
	// which queues their runs shortly after the acknowledgements.
	for deadline := time.Now().Add(30 * time.Second); e.woken.Load() == 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	_, total, err := e.db.FindWebhookEvents(context.Background(), store.WebhookEventFilter{OrgID: e.org, ProjectID: e.project, TaskID: e.task, Limit: 1})
	if err != nil || total != n {
		t.Fatalf("%d events stored (%v), want %d", total, err, n)
	}
	if e.woken.Load() == 0 {
		t.Fatal("the task scheduler was never told of the queued runs")
	}
	if n := pipeline.Arriving(e.p); n != 0 {
		t.Fatalf("%d committed deliveries still counted as on their way to the writer", n)
	}
}

// Correlation: a storm of one group is one incident; the resolved delivery
// resolves it and the incident is handed to the archiver.
func TestDispatchCorrelatesAndArchives(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(h *store.Webhook) { h.DedupeSeconds = 0 })
	for i := 0; i < 5; i++ {
		if _, err := e.ingest(t, signed(), alert("storm", "firing")); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if err := e.p.DispatchAll(ctx); err != nil {
		t.Fatal(err)
	}
	incs, n, err := e.db.FindIncidents(ctx, store.IncidentFilter{OrgID: e.org, ProjectID: e.project, Limit: 10})
	if err != nil || n != 1 || incs[0].EventCount != 5 {
		t.Fatalf("incidents %d (%v): %+v", n, err, incs)
	}
	if _, err := e.ingest(t, signed(), alert("storm", "resolved")); err != nil {
		t.Fatal(err)
	}
	if err := e.p.DispatchAll(ctx); err != nil {
		t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.archived) != 1 || e.archived[0] != incs[0].ID {
		t.Fatalf("archived %v, want the incident %s", e.archived, incs[0].ID)
	}
}

// countingUnsealer counts decryptions.
type countingUnsealer struct {
	pipeline.Unsealer
	n atomic.Int32
}

func (c *countingUnsealer) Unseal(aad string, ct []byte) ([]byte, error) {
	c.n.Add(1)
	return c.Unsealer.Unseal(aad, ct)
}

// A reload of the cached webhook decrypts its secret again only when the
// row's ciphertext changed: the same ciphertext reuses the plaintext, a
// new one (a rotation, even by another server that never told this one)
// is decrypted and replaces it.
func TestLookupReloadDecryptsOnlyChangedSecrets(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	cu := &countingUnsealer{Unsealer: e.deps.Secrets}
	var mu sync.Mutex
	now := time.Now().UTC()
	deps := e.deps
	deps.Secrets = cu
	deps.Now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	p := pipeline.New(deps)
	advance := func() { mu.Lock(); now = now.Add(2 * time.Second); mu.Unlock() }
	lookup := func() string {
		t.Helper()
		h, err := p.Lookup(ctx, e.task)
		if err != nil || len(h.Secrets) != 1 {
			t.Fatalf("lookup: %v", err)
		}
		return string(h.Secrets[0])
	}
	if got := lookup(); got != secret || cu.n.Load() != 1 {
		t.Fatalf("first load: %q after %d decryptions", got, cu.n.Load())
	}
	advance()
	if got := lookup(); got != secret || cu.n.Load() != 1 {
		t.Fatalf("reload of an unchanged row: %q after %d decryptions, want the plaintext reused", got, cu.n.Load())
	}
	h, err := e.db.FindWebhook(ctx, e.org, e.project, e.task)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.db.SaveWebhook(ctx, h, func(w, _ *store.Webhook) error {
		ct, kid, err := e.deps.Secrets.(*secrets.Keeper).Seal(pipeline.AAD(e.task), []byte("whsec-rotated"))
		w.SecretCT, w.SecretKeyID = ct, kid
		return err
	}); err != nil {
		t.Fatal(err)
	}
	advance()
	if got := lookup(); got != "whsec-rotated" || cu.n.Load() != 2 {
		t.Fatalf("reload after the secret changed: %q after %d decryptions", got, cu.n.Load())
	}
}

// gatedUnsealer holds its first decryption until released.
type gatedUnsealer struct {
	pipeline.Unsealer
	n       atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedUnsealer) Unseal(aad string, ct []byte) ([]byte, error) {
	if g.n.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.Unsealer.Unseal(aad, ct)
}

// Deliveries that miss the cache while a load of the webhook is under way
// share that load: one read and one decryption, the same answer for all.
func TestLookupSharesALoadUnderWay(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	g := &gatedUnsealer{Unsealer: e.deps.Secrets, entered: make(chan struct{}), release: make(chan struct{})}
	deps := e.deps
	deps.Secrets = g
	p := pipeline.New(deps)
	var wg sync.WaitGroup
	got := make([]string, 16)
	errs := make([]error, 16)
	look := func(i int) {
		defer wg.Done()
		h, err := p.Lookup(ctx, e.task)
		errs[i] = err
		if err == nil {
			got[i] = string(h.Secrets[0])
		}
	}
	wg.Add(1)
	go look(0)
	<-g.entered // the first load holds the decryption
	for i := 1; i < len(got); i++ {
		wg.Add(1)
		go look(i)
	}
	close(g.release)
	wg.Wait()
	for i := range got {
		if errs[i] != nil || got[i] != secret {
			t.Fatalf("lookup %d: %q, %v", i, got[i], errs[i])
		}
	}
	if n := g.n.Load(); n != 1 {
		t.Fatalf("%d decryptions, want one shared load", n)
	}
}
