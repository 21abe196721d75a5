package server_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// fakeAlertmanager speaks the two Alertmanager v2 calls the silence tools
// make, on loopback, and records them.
type fakeAlertmanager struct {
	*httptest.Server
	mu    sync.Mutex
	calls []string
	body  map[string]any
}

func newFakeAlertmanager(t *testing.T) *fakeAlertmanager {
	f := &fakeAlertmanager{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls = append(f.calls, r.Method+" "+r.URL.Path)
		switch {
		case r.Method == "POST" && r.URL.Path == "/api/v2/silences":
			b, _ := io.ReadAll(r.Body)
			_ = json.Unmarshal(b, &f.body)
			w.Header().Set("Content-Type", "application/json")
			_, _ = io.WriteString(w, `{"silenceID":"4f1c2a9e-sil"}`)
		case r.Method == "DELETE" && r.URL.Path == "/api/v2/silence/4f1c2a9e-sil":
			w.WriteHeader(200)
		default:
			http.Error(w, "not found", 404)
		}
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeAlertmanager) seen() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

func TestAlertmanagerSilenceIsApprovalGated(t *testing.T) {
	am := newFakeAlertmanager(t)
	create := `{"matchers":[{"name":"service","value":"db"},{"name":"env","value":"prod.*","is_regex":true}],"duration":"2h","comment":"db upgrade"}`
	e := newE2E(t,
		llmfake.ToolCall("alertmanager_create_silence", create), llmfake.Text("Silenced the db alerts for 2h."),
		llmfake.ToolCall("alertmanager_expire_silence", `{"silence_id":"4f1c2a9e-sil"}`), llmfake.Text("Expired."),
	)
	e.c.must(201, "POST", "/api/integrations", map[string]any{"kind": "alertmanager", "name": "am", "base_url": am.URL})

	for i, step := range []struct{ prompt, call, want string }{
		{"silence the db alerts during the upgrade", "POST /api/v2/silences", "silence 4f1c2a9e-sil created"},
		{"the upgrade is done: expire the silence", "DELETE /api/v2/silence/4f1c2a9e-sil", "silence 4f1c2a9e-sil expired"},
	} {
		sid, evs := e.chat(t, step.prompt)
		ar := lastOf(t, evs, "approval.required")
		if len(am.seen()) != i {
			t.Fatalf("Alertmanager was called before approval: %v", am.seen())
		}
		page := e.c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call", nil).JSON()
		item := page["items"].([]any)[0].(map[string]any)
		if cmd := item["subject"].(map[string]any)["command"].(string); !strings.HasPrefix(cmd, step.call) {
			t.Fatalf("the approver sees %q, want %s", cmd, step.call)
		}
		e.c.must(200, "POST", "/api/approvals/"+ar.Data["approval_id"].(string)+"/approve", map[string]any{})
		more := e.watch(t, sid, evs[len(evs)-1].ID)
		if res := lastOf(t, more, "tool.result"); !strings.Contains(res.Data["output"].(string), step.want) {
			t.Fatalf("after approval: %v", res.Data)
		}
		if got := am.seen(); len(got) != i+1 || got[i] != step.call {
			t.Fatalf("Alertmanager calls: %v", got)
		}
	}
	ms, _ := am.body["matchers"].([]any)
	if len(ms) != 2 || am.body["comment"] != "db upgrade" || am.body["createdBy"] != "opsagent" || ms[1].(map[string]any)["isRegex"] != true {
		t.Fatalf("silence body: %v", am.body)
	}
}
