package investigate

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

type fixed struct {
	name  string
	items []Item
	err   error
	hang  bool
}

func (f fixed) Name() string { return f.name }
func (f fixed) Gather(ctx context.Context, q Query) ([]Item, error) {
	if f.hang {
		<-make(chan struct{}) // ignores its context: the engine must not wait for it
	}
	return f.items, f.err
}

func TestGatherOrdersSectionsAndNamesFailures(t *testing.T) {
	e := New(Config{SourceTimeout: 50 * time.Millisecond},
		fixed{name: "loki", items: []Item{{Title: "lines", Content: "error: pool exhausted"}}},
		fixed{name: "changes", items: []Item{{Title: "deploy", Content: "shop v2"}}},
		fixed{name: "prometheus", hang: true},
		fixed{name: "grafana", err: errors.New("grafana answered 500")},
		fixed{name: "knowledge", items: []Item{{Title: "runbook", Content: "restart the pool"}}},
	)
	p := e.Gather(context.Background(), Query{IncidentID: "i1"})
	var got []string
	for _, it := range p.Items {
		got = append(got, it.ID+":"+it.Source)
	}
	if strings.Join(got, " ") != "ev1:knowledge ev2:changes ev3:loki" {
		t.Fatalf("items %v, want knowledge, changes, loki in Order", got)
	}
	if len(p.Failed) != 2 || p.Failed[0].Source != "prometheus" || !strings.Contains(p.Failed[0].Reason, "timed out after 50ms") ||
		p.Failed[1].Source != "grafana" || p.Failed[1].Reason != "grafana answered 500" {
		t.Fatalf("failed %+v", p.Failed)
	}
	text := p.Render()
	for _, want := range []string{"## Runbooks and facts that match", "### [ev1] runbook", "## Sources that gave nothing", "- prometheus: timed out after 50ms"} {
		if !strings.Contains(text, want) {
			t.Fatalf("render lacks %q:\n%s", want, text)
		}
	}
	if strings.Index(text, "[ev2]") > strings.Index(text, "[ev3]") {
		t.Fatalf("sections out of order:\n%s", text)
	}
}

func TestGatherKeepsCapsAndBudget(t *testing.T) {
	big := strings.Repeat("x", 5000)
	e := New(Config{SourceBytes: 1000, BudgetTokens: 400},
		fixed{name: "knowledge", items: []Item{{Title: "a", Content: big}, {Title: "b", Content: "never reached"}}},
		fixed{name: "changes", items: []Item{{Title: "c", Content: strings.Repeat("y", 900)}, {Title: "d", Content: strings.Repeat("z", 900)}}},
	)
	p := e.Gather(context.Background(), Query{})
	if len(p.Items) == 0 || !strings.Contains(p.Items[0].Content, "cut at the source's size cap of 1000 bytes") {
		t.Fatalf("first item not capped: %+v", p.Items)
	}
	for _, it := range p.Items {
		if it.Title == "b" {
			t.Fatal("an item past its source's cap was kept")
		}
	}
	if p.Tokens > 400 || p.Dropped == 0 {
		t.Fatalf("tokens %d (budget 400), dropped %d", p.Tokens, p.Dropped)
	}
}

func TestParseFinding(t *testing.T) {
	c := Checks{EvidenceIDs: []string{"ev1", "ev2"}, CallIDs: []string{"call_7"}, Targets: []string{"web-1", "server"}}
	r, err := ParseFinding([]byte(`{"summary":"pool exhausted","impact":"checkout 5xx",
		"hypotheses":[{"cause":"deploy halved the pool","confidence":"high","evidence":["ev2","call_7","ev9","nothing"]}],
		"next_steps":[{"action":"roll back","command":"systemctl restart shop","target":"web-1","needs_approval":true},
		{"action":"check db","command":"psql -c 'select 1'","target":"db-9"}]}`), c)
	if err != nil {
		t.Fatal(err)
	}
	ev := r.Hypotheses[0].Evidence
	if len(ev) != 2 || ev[0] != (Ref{Ref: "ev2", Kind: "evidence", Resolved: true}) || ev[1] != (Ref{Ref: "call_7", Kind: "tool_call", Resolved: true}) {
		t.Fatalf("evidence %+v", ev)
	}
	if strings.Join(r.DroppedRefs, ",") != "ev9,nothing" || strings.Join(r.UnresolvedTargets, ",") != "db-9" {
		t.Fatalf("dropped %v unresolved %v", r.DroppedRefs, r.UnresolvedTargets)
	}
	if !strings.Contains(r.Ack(), "ev9, nothing") {
		t.Fatalf("ack does not say what was dropped: %s", r.Ack())
	}
	_, err = ParseFinding([]byte(`{"summary":"","impact":"x","hypotheses":[{"cause":"c","confidence":"certain","evidence":[]}],"next_steps":[]}`), c)
	var fe *FindingError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "summary is missing") || !strings.Contains(err.Error(), `"certain" is not one of low, medium, high`) {
		t.Fatalf("bad finding: %v", err)
	}
}

// The HTTP sources speak the real APIs' wire formats (loopback fakes).
func TestHTTPSources(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer k" || r.URL.Query().Get("query") != `up{job="shop",instance="web-1:9100"}` {
			http.Error(w, "bad request "+r.URL.RawQuery, 400)
			return
		}
		w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"__name__":"up","job":"shop"},"values":[[1700000000,"1"],[1700000060,"0"]]}]}}`))
	})
	mux.HandleFunc("/loki/api/v1/query_range", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"status":"success","data":{"resultType":"streams","result":[{"stream":{"job":"shop"},"values":[["1700000000000000000","ERROR pool exhausted"]]}]}}`))
	})
	mux.HandleFunc("/api/v2/alerts", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`[{"labels":{"alertname":"DiskFull","job":"shop","instance":"web-1:9100"},"startsAt":"2026-01-01T00:00:00Z","status":{"state":"active"}}]`))
	})
	mux.HandleFunc("/api/v2/silences", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`[]`)) })
	mux.HandleFunc("/api/annotations", func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`not json`)) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ep := Endpoint{Label: "main", BaseURL: srv.URL, Auth: func(r *http.Request) { r.Header.Set("Authorization", "Bearer k") }}
	q := Query{Labels: map[string]string{"job": "shop", "instance": "web-1:9100"}, OpenedAt: time.Unix(1700000100, 0), Window: time.Hour}
	e := New(Config{}, Prometheus{ep}, Loki{ep}, Alertmanager{ep}, Grafana{ep})
	p := e.Gather(context.Background(), q)
	text := p.Render()
	for _, want := range []string{"up{job=\"shop\"}", "22:13:20 1", "ERROR pool exhausted", "DiskFull", "- grafana: /api/annotations answered something that is not its JSON"} {
		if !strings.Contains(text, want) {
			t.Errorf("pack lacks %q:\n%s", want, text)
		}
	}
}
