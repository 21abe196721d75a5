// Package investigate gathers the evidence pack of an investigation: what
// the platform already knows about an alert or incident, collected by
// deterministic code before the model's first call, so a small model is
// handed the evidence instead of having to find it.
//
// Sources (knowledge, incidents, changes, Prometheus, Loki, Alertmanager,
// Grafana, and any other behind Source) run concurrently, each within its
// own time budget and size cap; a source that fails, hangs or answers
// garbage is listed with its reason, never dropped silently. The pack has
// a total token budget and renders as sections in a fixed order (Order).
//
// It imports no other project package: the server adapts its store, its
// knowledge base and its integrations to Source.
package investigate

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Query is what an investigation is about.
type Query struct {
	OrgID, ProjectID string
	IncidentID       string
	Title            string            // the incident's or alert's title
	Service          string            // the alert's service label, when it has one
	Labels           map[string]string // the alert's labels (the first alert's, merged with the common ones)
	Expr             string            // the alert's own PromQL expression, when the alert carries it
	OpenedAt         time.Time         // when the incident opened (or the alert fired)
	Window           time.Duration     // how far back metric and log sources look (default 1h)
}

// Item is one piece of evidence: where it came from and when.
type Item struct {
	ID      string    `json:"id" doc:"ev1, ev2, ... in pack order; findings cite them"`
	Source  string    `json:"source" doc:"alert, timeline, knowledge, incidents, changes, prometheus, loki, alertmanager, grafana, kubernetes"`
	Title   string    `json:"title"`
	Content string    `json:"content"`
	Origin  string    `json:"origin" doc:"URL or name of where it came from"`
	At      time.Time `json:"at" doc:"when the evidence is from"`
}

// Failure is a source that gave nothing usable, and why.
type Failure struct {
	Source string `json:"source"`
	Reason string `json:"reason"`
}

// Pack is the gathered evidence.
type Pack struct {
	IncidentID   string    `json:"incident_id"`
	GatheredAt   time.Time `json:"gathered_at"`
	BudgetTokens int       `json:"budget_tokens"`
	Tokens       int       `json:"tokens" doc:"estimated tokens of the items kept (4 bytes a token)"`
	Items        []Item    `json:"items"`
	Failed       []Failure `json:"failed"`
	// Dropped counts items left out to keep within the budget.
	Dropped int `json:"dropped"`
}

// Source gathers one kind of evidence.
type Source interface {
	Name() string
	Gather(ctx context.Context, q Query) ([]Item, error)
}

// Order is the documented order of a pack's sections: what fired and what
// happened so far, what the team wrote about it, what happened before,
// what changed, then the live signals.
var Order = []string{"alert", "timeline", "knowledge", "incidents", "changes", "prometheus", "loki", "alertmanager", "grafana", "kubernetes"}

// Defaults of Config.
const (
	DefaultSourceTimeout = 3 * time.Second
	DefaultSourceBytes   = 8 << 10
	DefaultBudgetTokens  = 8000
	DefaultWindow        = time.Hour
)

// Config bounds a gathering.
type Config struct {
	SourceTimeout time.Duration // each source's own time budget
	SourceBytes   int           // each source's size cap (its items' content together)
	BudgetTokens  int           // the whole pack's budget
	Now           func() time.Time
}

// Engine gathers packs from its sources.
type Engine struct {
	cfg     Config
	sources []Source
}

// New builds an engine over sources with cfg (zero fields take the defaults).
func New(cfg Config, sources ...Source) *Engine {
	if cfg.SourceTimeout <= 0 {
		cfg.SourceTimeout = DefaultSourceTimeout
	}
	if cfg.SourceBytes <= 0 {
		cfg.SourceBytes = DefaultSourceBytes
	}
	if cfg.BudgetTokens <= 0 {
		cfg.BudgetTokens = DefaultBudgetTokens
	}
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Now().UTC() }
	}
	return &Engine{cfg: cfg, sources: sources}
}

// Gather runs every source at once, each under its own deadline, and
// returns when the last has answered or timed out: the whole gathering
// takes at most the source budget (plus the time to assemble the pack).
// A source that ignores its context is abandoned at its deadline.
func (e *Engine) Gather(ctx context.Context, q Query) *Pack {
	if q.Window <= 0 {
		q.Window = DefaultWindow
	}
	type result struct {
		items []Item
		err   error
	}
	results := make([]result, len(e.sources))
	var wg sync.WaitGroup
	for i, s := range e.sources {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sctx, cancel := context.WithTimeout(ctx, e.cfg.SourceTimeout)
			defer cancel()
			done := make(chan result, 1)
			go func() {
				defer func() {
					if p := recover(); p != nil {
						done <- result{err: fmt.Errorf("the source failed: %v", p)}
					}
				}()
				items, err := s.Gather(sctx, q)
				done <- result{items: items, err: err}
			}()
			select {
			case r := <-done:
				results[i] = r
			case <-sctx.Done():
				results[i] = result{err: sctx.Err()}
			}
		}()
	}
	wg.Wait()
	p := &Pack{IncidentID: q.IncidentID, GatheredAt: e.cfg.Now(), BudgetTokens: e.cfg.BudgetTokens, Items: []Item{}, Failed: []Failure{}}
	var items []Item
	for i, r := range results {
		name := e.sources[i].Name()
		if r.err != nil {
			p.Failed = append(p.Failed, Failure{Source: name, Reason: reason(r.err, e.cfg.SourceTimeout)})
			continue
		}
		items = append(items, capItems(name, r.items, e.cfg.SourceBytes)...)
	}
	sort.SliceStable(items, func(a, b int) bool { return rank(items[a].Source) < rank(items[b].Source) })
	budget := e.cfg.BudgetTokens * 4
	used := 0
	for _, it := range items {
		n := len(it.Title) + len(it.Content) + len(it.Origin) + 40
		if used+n > budget {
			p.Dropped++
			continue
		}
		used += n
		it.ID = fmt.Sprintf("ev%d", len(p.Items)+1)
		p.Items = append(p.Items, it)
	}
	p.Tokens = (used + 3) / 4
	sort.Slice(p.Failed, func(a, b int) bool { return rank(p.Failed[a].Source) < rank(p.Failed[b].Source) })
	return p
}

func reason(err error, budget time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out after " + budget.String()
	}
	return err.Error()
}

// capItems keeps a source's items within its size cap, cutting the last
// one kept and saying so; every item is labelled with its source.
func capItems(source string, items []Item, capBytes int) []Item {
	out := make([]Item, 0, len(items))
	left := capBytes
	for _, it := range items {
		if left <= 0 {
			break
		}
		if it.Source == "" {
			it.Source = source
		}
		if len(it.Content) > left {
			it.Content = cut(it.Content, left) + "\n[... cut at the source's size cap of " + fmt.Sprint(capBytes) + " bytes]"
		}
		left -= len(it.Content)
		out = append(out, it)
	}
	return out
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && (s[n]&0xC0) == 0x80 {
		n--
	}
	return s[:n]
}

func rank(source string) int {
	for i, s := range Order {
		if s == source {
			return i
		}
	}
	return len(Order)
}

// IDs lists the pack's item ids.
func (p *Pack) IDs() []string {
	ids := make([]string, len(p.Items))
	for i, it := range p.Items {
		ids[i] = it.ID
	}
	return ids
}

// sectionTitles name the sections as the model reads them.
var sectionTitles = map[string]string{
	"alert": "The alert", "timeline": "The incident's timeline so far", "knowledge": "Runbooks and facts that match",
	"incidents": "Similar past incidents and how they were resolved", "changes": "Changes before the alert",
	"prometheus": "Prometheus series", "loki": "Loki log lines", "alertmanager": "Alertmanager silences and related alerts",
	"grafana": "Grafana annotations", "kubernetes": "Kubernetes",
}

// Render writes the pack as Markdown sections in Order, each item headed
// by its id, where it came from and when, then the sources that failed.
// The caller fences and masks it (it is data from the systems inspected).
func (p *Pack) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Evidence pack (gathered %s, %d items, about %d of %d tokens)\n", p.GatheredAt.Format(time.RFC3339), len(p.Items), p.Tokens, p.BudgetTokens)
	section := ""
	for _, it := range p.Items {
		if it.Source != section {
			section = it.Source
			title := sectionTitles[section]
			if title == "" {
				title = section
			}
			fmt.Fprintf(&b, "\n## %s\n", title)
		}
		fmt.Fprintf(&b, "\n### [%s] %s\nsource: %s; from: %s; at: %s\n%s\n", it.ID, it.Title, it.Source, it.Origin, it.At.UTC().Format(time.RFC3339), strings.TrimSpace(it.Content))
	}
	if p.Dropped > 0 {
		fmt.Fprintf(&b, "\n(%d more items left out to keep within the budget)\n", p.Dropped)
	}
	if len(p.Failed) > 0 {
		b.WriteString("\n## Sources that gave nothing\n")
		for _, f := range p.Failed {
			fmt.Fprintf(&b, "- %s: %s\n", f.Source, f.Reason)
		}
	}
	return b.String()
}
