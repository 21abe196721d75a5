package tools

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"time"
)

// GrafanaSearch is grafana_search: dashboards and folders by title or tag.
func GrafanaSearch(d QueryDeps) *Query {
	return d.query(&Query{Name: "grafana_search", Kind: "grafana",
		Description: "Search Grafana dashboards by title and tag; returns titles, folders and URLs. Read-only.",
		Params: map[string]any{"query": str("words of the title", "maxLength", 256),
			"tag": map[string]any{"type": "array", "maxItems": 10, "items": str("tag", "maxLength", 128)}},
		Build: func(m map[string]any, _ time.Time) (string, url.Values, error) {
			v := url.Values{"type": {"dash-db"}, "limit": {"50"}}
			if q := argString(m, "query", ""); q != "" {
				v.Set("query", q)
			}
			if ts, ok := m["tag"].([]any); ok {
				for _, t := range ts {
					v.Add("tag", fmt.Sprint(t))
				}
			}
			return "/api/search", v, nil
		},
		Format: formatGrafanaSearch})
}

// GrafanaAlerts is grafana_alerts: the alerts of Grafana's own alerting.
func GrafanaAlerts(d QueryDeps) *Query {
	return d.query(&Query{Name: "grafana_alerts", Kind: "grafana",
		Description: "List the firing alerts of Grafana-managed alerting (its built-in Alertmanager). Read-only.",
		Params:      map[string]any{"filter": map[string]any{"type": "array", "maxItems": 20, "items": str("label matcher", "maxLength", 512)}},
		Build: func(m map[string]any, _ time.Time) (string, url.Values, error) {
			v := url.Values{"active": {"true"}}
			if fs, ok := m["filter"].([]any); ok {
				for _, f := range fs {
					v.Add("filter", fmt.Sprint(f))
				}
			}
			return "/api/alertmanager/grafana/api/v2/alerts", v, nil
		},
		Format: formatAlerts})
}

type grafanaHit struct {
	UID         string   `json:"uid"`
	Title       string   `json:"title"`
	URL         string   `json:"url"`
	FolderTitle string   `json:"folderTitle"`
	Tags        []string `json:"tags"`
}

func formatGrafanaSearch(body []byte) (string, error) {
	var hits []grafanaHit
	if err := json.Unmarshal(body, &hits); err != nil {
		return "", err
	}
	var out strings.Builder
	fmt.Fprintf(&out, "%d dashboards\n", len(hits))
	for _, h := range hits {
		fmt.Fprintf(&out, "- %s (folder %q, uid %s, tags %v) %s\n", h.Title, h.FolderTitle, h.UID, h.Tags, h.URL)
	}
	return out.String(), nil
}

// QueryTools returns the query tools of the integration kinds present.
func QueryTools(d QueryDeps, kinds map[string]bool) []*Query {
	var out []*Query
	if kinds["prometheus"] {
		out = append(out, PrometheusQuery(d), PrometheusQueryRange(d))
	}
	if kinds["alertmanager"] {
		out = append(out, AlertmanagerAlerts(d), AlertmanagerSilences(d))
	}
	if kinds["loki"] {
		out = append(out, LokiQuery(d))
	}
	if kinds["grafana"] {
		out = append(out, GrafanaSearch(d), GrafanaAlerts(d))
	}
	return out
}
