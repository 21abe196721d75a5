package billing

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Service is billing as the server uses it: which plan an org is on, the
// quota gate creates consult, and the monthly agent caps.
type Service struct {
	Mode    Mode
	Catalog *Catalog
	// DefaultPlan is the plan of an org that never chose one.
	DefaultPlan string
	// Grace is how long a past-due org keeps working before it turns read-only.
	Grace time.Duration
	DB    *store.DB
	Now   func() time.Time
	// Stripe is the payment client (stripe mode only).
	Stripe *Stripe
	// KnowledgeUse reports an org's knowledge storage in bytes, per project
	// ("" for org-wide documents).
	KnowledgeUse func(orgID string) (total int64, byProject map[string]int64)

	knowledgeLocks sync.Map // org id -> *sync.Mutex
	// pastDue counts past-due orgs (RefreshPastDue); 0 lets every write
	// skip the read-only check's account read.
	pastDue atomic.Int64
}

// RefreshPastDue recounts the past-due orgs; call it at start and after
// anything that changes an account's status (Stripe events).
func (s *Service) RefreshPastDue(ctx context.Context) error {
	n, err := s.DB.CountPastDue(ctx)
	if err == nil {
		s.pastDue.Store(n)
	}
	return err
}

// MaybeReadOnly is false when no org is past due, so none can be read-only.
// Servers sharing a PostgreSQL database always check: a Stripe event that
// makes an org past due may reach another server, whose count this one
// never refreshes.
func (s *Service) MaybeReadOnly() bool {
	return s.On() && (s.pastDue.Load() > 0 || s.DB.Shared())
}

// On reports whether plans and quotas apply (showback or stripe).
func (s *Service) On() bool { return s != nil && s.Mode != ModeOff }

// PlanOf returns the plan in force for an account: the unlimited plan while
// billing is off, and the default plan for an unknown or unset id (an
// operator may remove a plan from the file; the org keeps working).
func (s *Service) PlanOf(a *store.BillingAccount) *Plan {
	if !s.On() {
		p, _ := s.Catalog.Get("unlimited")
		return p
	}
	if p, ok := s.Catalog.Get(a.PlanID); ok {
		return p
	}
	p, _ := s.Catalog.Get(s.DefaultPlan)
	return p
}

// ReadOnly reports an org whose payment is past due beyond the grace period.
func (s *Service) ReadOnly(a *store.BillingAccount, now time.Time) bool {
	return s.On() && a.Status == store.BillingPastDue && a.PastDueSince != nil && now.After(a.PastDueSince.Add(s.Grace))
}

// GraceEnds is when a past-due org turns read-only (nil when not past due).
func (s *Service) GraceEnds(a *store.BillingAccount) *time.Time {
	if a.Status != store.BillingPastDue || a.PastDueSince == nil {
		return nil
	}
	t := a.PastDueSince.Add(s.Grace)
	return &t
}

// featureOf is the plan feature a counted create needs: a plan without it
// refuses the create (402 feature_not_in_plan) whatever its limits.
var featureOf = map[store.QuotaKind]string{store.QuotaConnectors: "connectors", store.QuotaChannels: "channels"}

// nextMonth is the first instant of the month after now's.
func nextMonth(now time.Time) time.Time {
	now = now.UTC()
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC).AddDate(0, 1, 0)
}

// MonthStart is the first instant of now's UTC month.
func MonthStart(now time.Time) time.Time { return nextMonth(now).AddDate(0, -1, 0) }

// Gate is the store.QuotaGate of billing: it runs inside the transaction
// that creates the thing, so the count it reads and the row it guards are
// one serialized step (SQLite's single writer).
func (s *Service) Gate(ctx context.Context, tx *store.Tx, kind store.QuotaKind, orgID string, n int64) error {
	a, err := store.BillingAccountTx(ctx, tx, orgID)
	if err != nil {
		return err
	}
	plan := s.PlanOf(a)
	if s.ReadOnly(a, tx.Now) {
		return &store.QuotaError{Quota: kind, Plan: plan.ID, ReadOnly: true}
	}
	if f := featureOf[kind]; f != "" && !plan.HasFeature(f) {
		return &store.QuotaError{Quota: kind, Plan: plan.ID, Feature: f}
	}
	limit, limited := plan.Limit(kind)
	if kind == store.QuotaWebhookEvents {
		// The counter is kept even without a limit, so a later plan with one
		// starts from this month's real count.
		over, cur, err := store.BumpMonthlyWithin(ctx, tx, orgID, string(kind), n, limit, limited, func() (int64, error) {
			return store.CountWebhookEventsSince(ctx, tx, orgID, MonthStart(tx.Now))
		})
		if err != nil || !over {
			return err
		}
		return &store.QuotaError{Quota: kind, Plan: plan.ID, Limit: limit, Current: float64(cur),
			RetryAfter: nextMonth(tx.Now).Sub(tx.Now)}
	}
	if !limited {
		return nil
	}
	if store.TriggerCounted(kind) {
		over, err := store.CountedOver(ctx, tx, kind, orgID, n, limit)
		if err != nil || !over {
			return err
		}
	}
	cur, counted, err := store.QuotaUse(ctx, tx, kind, orgID, tx.Now)
	if err != nil || !counted {
		return err
	}
	if float64(cur+n) > limit {
		return &store.QuotaError{Quota: kind, Plan: plan.ID, Limit: limit, Current: float64(cur)}
	}
	return nil
}

// CheckKnowledge refuses adding add bytes (replacing replaced bytes) of
// knowledge to an org over its plan's storage. The caller holds
// LockKnowledge(orgID) across this check and the write, since documents
// live in files, outside the database transaction. On a PostgreSQL cluster
// the usage it reads can be passed by another server's upload at once: the
// write itself is checked again by KnowledgeQuota, in its transaction.
func (s *Service) CheckKnowledge(ctx context.Context, orgID string, add, replaced int64) error {
	if !s.On() || s.KnowledgeUse == nil {
		return nil
	}
	a, err := s.DB.FindBillingAccount(ctx, orgID)
	if err != nil {
		return err
	}
	return s.knowledgeVerdict(a, s.Now(), func() int64 { cur, _ := s.KnowledgeUse(orgID); return cur }, add, replaced)
}

// KnowledgeQuota is the knowledge storage check of orgID's document writes
// made in the database (a PostgreSQL cluster's): the store runs it in the
// transaction that writes the document, on the usage it reads there, so
// uploads racing on several servers never store more than the plan allows.
// Nil when billing is off.
func (s *Service) KnowledgeQuota(orgID string) store.KnowledgeQuota {
	if !s.On() {
		return nil
	}
	return func(ctx context.Context, tx *store.Tx, used, replaced, add int64) error {
		a, err := store.BillingAccountTx(ctx, tx, orgID)
		if err != nil {
			return err
		}
		return s.knowledgeVerdict(a, tx.Now, func() int64 { return used }, add, replaced)
	}
}

// knowledgeVerdict is the storage rule: read-only orgs and plans without
// the knowledge feature store nothing; otherwise the usage after the write
// must stay within the plan's limit.
func (s *Service) knowledgeVerdict(a *store.BillingAccount, now time.Time, used func() int64, add, replaced int64) error {
	plan := s.PlanOf(a)
	if s.ReadOnly(a, now) {
		return &store.QuotaError{Quota: store.QuotaKnowledgeBytes, Plan: plan.ID, ReadOnly: true}
	}
	if !plan.HasFeature("knowledge") {
		return &store.QuotaError{Quota: store.QuotaKnowledgeBytes, Plan: plan.ID, Feature: "knowledge"}
	}
	limit, ok := plan.Limit(store.QuotaKnowledgeBytes)
	if !ok {
		return nil
	}
	cur := used()
	if float64(cur-replaced+add) > limit {
		return &store.QuotaError{Quota: store.QuotaKnowledgeBytes, Plan: plan.ID, Limit: limit, Current: float64(cur)}
	}
	return nil
}

// LockKnowledge serializes knowledge writes of one org while billing is on;
// it returns the unlock.
func (s *Service) LockKnowledge(orgID string) func() {
	if !s.On() {
		return func() {}
	}
	v, _ := s.knowledgeLocks.LoadOrStore(orgID, &sync.Mutex{})
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// RunCaps are an org's monthly agent caps against this month's use, read
// when a run starts; nil when the plan caps nothing.
type RunCaps struct {
	Plan         string
	Runs, Tokens *float64
	Cost         *float64
	Used         store.AgentUse
	ReadOnly     bool
}

// AgentCaps reads the plan's monthly agent caps and the month's use.
func (s *Service) AgentCaps(ctx context.Context, orgID string) (*RunCaps, error) {
	if !s.On() {
		return nil, nil
	}
	a, err := s.DB.FindBillingAccountCached(ctx, orgID)
	if err != nil {
		return nil, err
	}
	plan := s.PlanOf(a)
	c := &RunCaps{Plan: plan.ID, ReadOnly: s.ReadOnly(a, s.Now())}
	get := func(k store.QuotaKind) *float64 {
		if v, ok := plan.Limit(k); ok {
			return &v
		}
		return nil
	}
	c.Runs, c.Tokens, c.Cost = get(store.QuotaAgentRuns), get(store.QuotaAgentTokens), get(store.QuotaLLMCost)
	if c.Runs == nil && c.Tokens == nil && c.Cost == nil && !c.ReadOnly {
		return nil, nil
	}
	if c.Used, err = s.DB.FindAgentUse(ctx, orgID, MonthStart(s.Now())); err != nil {
		return nil, err
	}
	return c, nil
}

// Start says why a run may not start: the org is read-only, or the month's
// runs (this one included, its session already recorded), tokens or cost
// are at the cap. "" lets it start.
func (c *RunCaps) Start() string {
	switch {
	case c.ReadOnly:
		return "the organization is read-only: its payment is past due beyond the grace period"
	case c.Runs != nil && float64(c.Used.Runs) > *c.Runs:
		return fmt.Sprintf("the plan's monthly cap of %g agent runs is reached (%d this month, plan %s)", *c.Runs, c.Used.Runs-1, c.Plan)
	}
	return c.During(0, 0)
}

// During says why a running run must stop after using tokens and cost of
// its own on top of the month's use before it started.
func (c *RunCaps) During(tokens int64, cost float64) string {
	if c.Tokens != nil && float64(c.Used.Tokens+tokens) >= *c.Tokens {
		return fmt.Sprintf("the plan's monthly cap of %g tokens is reached (%d used this month, plan %s)", *c.Tokens, c.Used.Tokens+tokens, c.Plan)
	}
	if c.Cost != nil && c.Used.Cost+cost >= *c.Cost {
		return fmt.Sprintf("the plan's monthly cap of $%.2f LLM cost is reached ($%.4f spent this month, plan %s)", *c.Cost, c.Used.Cost+cost, c.Plan)
	}
	return ""
}
