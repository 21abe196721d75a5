package tools

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// fakeMonitoring answers like Prometheus, Alertmanager, Loki and Grafana
// (their documented JSON), and records what it was asked.
func fakeMonitoring(t *testing.T, seen *[]*http.Request) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r)
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"__name__":"up","job":"api","instance":"a:9090"},"value":[1700000000,"1"]}]}}`))
	})
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r)
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"api"},"values":[[1700000000,"0.5"],[1700000060,"0.7"]]}]}}`))
	})
	mux.HandleFunc("/api/v2/alerts", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r)
		_, _ = w.Write([]byte(`[{"labels":{"alertname":"HighLatency","severity":"critical"},"annotations":{"summary":"p99 > 2s"},"startsAt":"2024-01-01T00:00:00Z","status":{"state":"active"},"fingerprint":"f1"}]`))
	})
	mux.HandleFunc("/loki/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r)
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[{"stream":{"app":"api"},"values":[["1700000000000000000","error: db timeout"]]}]}}`))
	})
	mux.HandleFunc("/api/search", func(w http.ResponseWriter, r *http.Request) {
		*seen = append(*seen, r)
		w.WriteHeader(http.StatusUnauthorized)
		_, _ = w.Write([]byte(`{"message":"invalid API key"}`))
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestQueryToolsSpeakTheAPIs(t *testing.T) {
	var seen []*http.Request
	srv := fakeMonitoring(t, &seen)
	now := time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC)
	d := QueryDeps{Egress: &Egress{AllowPrivate: true}, Now: func() time.Time { return now },
		Endpoints: func(_ context.Context, kind, name string) (*Endpoint, error) {
			if name != "" && name != "main" {
				return nil, errors.New("no " + kind + " integration named " + name)
			}
			return &Endpoint{Kind: kind, Name: "main", BaseURL: srv.URL, Header: http.Header{"Authorization": {"Bearer tok-123"}}}, nil
		}}
	run := func(q *Query, args string) string {
		t.Helper()
		out, err := q.Run(context.Background(), json.RawMessage(args))
		if err != nil {
			t.Fatalf("%s: %v", q.Name, err)
		}
		return out
	}
	out := run(PrometheusQuery(d), `{"query":"up"}`)
	if !strings.Contains(out, `up{instance="a:9090", job="api"} 1`) {
		t.Errorf("instant: %s", out)
	}
	if r := seen[0]; r.URL.Query().Get("query") != "up" || r.Header.Get("Authorization") != "Bearer tok-123" || r.URL.Query().Get("time") != "2024-05-01T12:00:00Z" {
		t.Errorf("instant request: %v %v", r.URL, r.Header)
	}
	out = run(PrometheusQueryRange(d), `{"query":"rate(x[5m])","since":"1h"}`)
	if !strings.Contains(out, "matrix, 1 series") || seen[1].URL.Query().Get("start") != "2024-05-01T11:00:00Z" || seen[1].URL.Query().Get("step") != "36s" {
		t.Errorf("range: %s %v", out, seen[1].URL)
	}
	if _, err := PrometheusQueryRange(d).Run(context.Background(), json.RawMessage(`{"query":"x","since":"30d","step":"1s"}`)); err == nil {
		t.Error("a range of millions of points was sent")
	}
	out = run(AlertmanagerAlerts(d), `{"filter":["severity=\"critical\""]}`)
	if !strings.Contains(out, "HighLatency [active]") || !strings.Contains(out, "p99 > 2s") || seen[2].URL.Query().Get("filter") != `severity="critical"` {
		t.Errorf("alerts: %s %v", out, seen[2].URL)
	}
	out = run(LokiQuery(d), `{"query":"{app=\"api\"} |= \"error\"","limit":10}`)
	if !strings.Contains(out, "error: db timeout") || seen[3].URL.Query().Get("limit") != "10" {
		t.Errorf("loki: %s", out)
	}
	_, err := GrafanaSearch(d).Run(context.Background(), json.RawMessage(`{"query":"api"}`))
	if err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "tok-123") {
		t.Errorf("grafana error: %v", err)
	}
	_, err = PrometheusQuery(d).Run(context.Background(), json.RawMessage(`{"query":"up","integration":"other"}`))
	if err == nil || !strings.Contains(err.Error(), "no prometheus integration named other") {
		t.Errorf("unknown integration: %v", err)
	}
}
