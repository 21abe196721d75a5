package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/opsagent/opsagent/rag"
	"github.com/opsagent/opsagent/server/investigate"
	"github.com/opsagent/opsagent/store"
)

// The evidence sources that read the platform's own records: the alert,
// the timeline, the knowledge base, past incidents and the change feed.
// (Prometheus, Loki, Alertmanager and Grafana speak HTTP and live in
// server/investigate.)

// alertSource: the incident's alerts with their labels and annotations.
type alertSource struct {
	inc    *store.Incident
	alerts []incidentAlert
}

func (alertSource) Name() string { return "alert" }

func (a alertSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	if len(a.alerts) == 0 {
		return []investigate.Item{{Title: a.inc.Title, Content: "severity: " + a.inc.Severity + "\nstatus: " + a.inc.Status,
			Origin: "incident " + a.inc.ID + " (" + a.inc.Provider + ")", At: a.inc.OpenedAt}}, nil
	}
	var items []investigate.Item
	for i, al := range a.alerts {
		if i == 5 {
			break
		}
		var b strings.Builder
		fmt.Fprintf(&b, "severity: %s\nstatus: %s\n", al.Severity, al.Status)
		if al.Summary != "" {
			fmt.Fprintf(&b, "summary: %s\n", al.Summary)
		}
		keys := make([]string, 0, len(al.Labels))
		for k := range al.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "label %s=%s\n", k, al.Labels[k])
		}
		for _, l := range al.Links {
			fmt.Fprintf(&b, "link: %s\n", l)
		}
		at := al.StartsAt
		if at.IsZero() {
			at = a.inc.OpenedAt
		}
		items = append(items, investigate.Item{Title: firstNonEmptyStr(al.Title, a.inc.Title), Content: b.String(),
			Origin: a.inc.Provider + " alert of incident " + a.inc.ID, At: at})
	}
	return items, nil
}

// timelineSource: what happened on the incident so far (besides alerts).
type timelineSource struct{ tl []store.TimelineEntry }

func (timelineSource) Name() string { return "timeline" }

func (t timelineSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	var b strings.Builder
	var last time.Time
	for _, e := range t.tl {
		if e.Kind == "alert" {
			continue
		}
		fmt.Fprintf(&b, "%s %s: %s\n", e.At.UTC().Format(time.RFC3339), e.Kind, e.Text)
		last = e.At
	}
	if b.Len() == 0 {
		return nil, nil
	}
	return []investigate.Item{{Title: "timeline", Content: b.String(), Origin: "incident " + q.IncidentID, At: last}}, nil
}

// knowledgeSource: the runbooks and facts the knowledge base ranks highest.
type knowledgeSource struct{ s *Server }

func (knowledgeSource) Name() string { return "knowledge" }

func (k knowledgeSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	text := searchText(q)
	hits, err := k.s.knowledge.Search(ctx, q.OrgID, q.ProjectID, rag.Query{Text: text, Collections: []string{rag.CollectionRunbooks, rag.CollectionFacts}, Limit: 3})
	if err != nil {
		return nil, err
	}
	var items []investigate.Item
	for _, h := range hits {
		why := "ranked for: " + text
		if len(h.Headings) > 0 {
			why += "; section: " + strings.Join(h.Headings, " > ")
		}
		items = append(items, investigate.Item{Title: firstNonEmptyStr(h.Title, h.Name), Content: why + "\n" + h.Snippet,
			Origin: "knowledge " + h.Collection + "/" + h.Name, At: k.s.Now()})
	}
	return items, nil
}

// pastIncidentSource: similar resolved incidents and how they were resolved.
type pastIncidentSource struct{ s *Server }

func (pastIncidentSource) Name() string { return "incidents" }

func (p pastIncidentSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	hits, err := p.s.knowledge.Search(ctx, q.OrgID, q.ProjectID, rag.Query{Text: searchText(q), Collections: []string{rag.CollectionIncidents}, Limit: 5})
	if err != nil {
		return nil, err
	}
	var items []investigate.Item
	// An incident is one item, whether its archive or its postmortem matched.
	seen := map[string]bool{q.IncidentID: true}
	for _, h := range hits {
		key := strings.TrimSuffix(strings.TrimPrefix(h.Name, "postmortem-"), ".md")
		if seen[key] || len(items) == 3 {
			continue
		}
		seen[key] = true
		it := investigate.Item{Title: firstNonEmptyStr(h.Title, h.Name), Content: h.Snippet, Origin: "knowledge incidents/" + h.Name, At: p.s.Now()}
		// An archived incident: its resolution is its summary.
		if id := key; store.ValidID(id) {
			if inc, _, err := p.s.db.FindIncident(ctx, q.OrgID, q.ProjectID, id); err == nil {
				it.Title = inc.Title
				it.Content = "resolution: " + firstNonEmptyStr(inc.Summary, "(no summary given)") + "\n" + h.Snippet
				if inc.ResolvedAt != nil {
					it.At = *inc.ResolvedAt
				}
			}
		}
		items = append(items, it)
	}
	return items, nil
}

// changeSource: the change feed in the hour before the incident opened.
type changeSource struct{ s *Server }

func (changeSource) Name() string { return "changes" }

func (c changeSource) Gather(ctx context.Context, q investigate.Query) ([]investigate.Item, error) {
	since, until := q.OpenedAt.Add(-ChangeLookback), q.OpenedAt.Add(time.Minute)
	cs, _, err := c.s.db.ListChanges(ctx, store.ChangeFilter{OrgID: q.OrgID, ProjectID: q.ProjectID, Since: &since, Until: &until, Limit: 10})
	if err != nil {
		return nil, err
	}
	var items []investigate.Item
	for _, ch := range cs {
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s by %s", ch.Source, ch.Kind, firstNonEmptyStr(ch.Author, "unknown"))
		if ch.Service != "" {
			fmt.Fprintf(&b, "; service %s", ch.Service)
		}
		if ch.Environment != "" {
			fmt.Fprintf(&b, "; environment %s", ch.Environment)
		}
		fmt.Fprintf(&b, "; %s before the incident opened\n", q.OpenedAt.Sub(ch.OccurredAt).Round(time.Second))
		if ch.Description != "" {
			b.WriteString(ch.Description + "\n")
		}
		origin := "change " + ch.ID
		if ch.URL != "" {
			origin += " " + ch.URL
		}
		items = append(items, investigate.Item{Title: ch.Title, Content: b.String(), Origin: origin, At: ch.OccurredAt})
	}
	return items, nil
}

// searchText is what the knowledge base is asked: the title and the
// alert's identifying label values.
func searchText(q investigate.Query) string {
	parts := []string{q.Title}
	for _, k := range []string{"alertname", "service", "job", "app"} {
		if v := q.Labels[k]; v != "" && !strings.Contains(q.Title, v) {
			parts = append(parts, v)
		}
	}
	return strings.Join(parts, " ")
}

func firstNonEmptyStr(vals ...string) string {
	for _, v := range vals {
		if strings.TrimSpace(v) != "" {
			return v
		}
	}
	return ""
}
