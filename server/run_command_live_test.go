package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A command on the server streams its output live as tool.output events
// before its tool.result, labelled with the server as host, and an injected
// secret is masked in the live text as it is in the result.
func TestLocalCommandStreamsMaskedOutputLive(t *testing.T) {
	t.Parallel()
	const value = "s3cr3tLive7a6b5c4d"
	cmd := `echo tick 1; sleep 1; echo "token is $DB_TOKEN"; echo tick 2`
	args, _ := json.Marshal(map[string]any{"command": cmd, "target": "server", "secrets": []string{"DB_TOKEN"}})
	e := newE2E(t,
		llmfake.ToolCall("run_command", string(args)),
		llmfake.Text("It ticked twice."),
	)
	e.c.must(200, "PUT", "/api/secrets/DB_TOKEN", map[string]any{"value": value})
	sid, evs := e.chat(t, "tick on the server")
	id := e.waitingApproval(t, sid, evs, cmd)
	e.c.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	more := e.watch(t, sid, evs[len(evs)-1].ID)

	var live strings.Builder
	chunks, result := 0, false
	for _, ev := range more {
		switch ev.Type {
		case "tool.output":
			if result {
				t.Fatalf("tool.output after tool.result: %v", ev.Data)
			}
			if ev.Data["host"] != "server" || ev.Data["name"] != "run_command" {
				t.Fatalf("tool.output: %v", ev.Data)
			}
			live.WriteString(ev.Data["text"].(string))
			chunks++
		case "tool.result":
			result = true
		}
	}
	got := live.String()
	if chunks < 2 || !strings.Contains(got, "tick 1\n") || !strings.Contains(got, "tick 2\n") || !strings.Contains(got, "token is ") {
		t.Fatalf("live output in %d chunk(s): %q", chunks, got)
	}
	if strings.Contains(got, value) {
		t.Fatalf("the live output carries the secret: %q", got)
	}
}
