package server_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Without --allow-local-commands and without a connector, run_command has
// nowhere to run: the call is refused at once with the reason (the model
// reads it from the platform), no approval is opened and nobody is paged.
func TestRunCommandThatCannotRunIsRefusedWithoutApproval(t *testing.T) {
	fake := llmfake.New(t,
		llmfake.ToolCall("run_command", `{"command":"uptime","target":"server"}`),
		llmfake.ToolCall("run_command", `{"command":"uptime","target":"web-1"}`),
		llmfake.Text("I cannot run commands here."),
	)
	env := newEnv(t, withLLM(fake))
	c := env.register("oncall@example.com")
	withProject(t, env, c)
	e := &e2e{env: env, fake: fake, c: c, work: filepath.Join(env.Dir, "work", c.Project)}
	sid, evs := e.chat(t, "check the uptime")
	for _, ev := range evs {
		if ev.Type == "approval.required" {
			t.Fatalf("a call that cannot run asked for approval: %v", ev.Data)
		}
	}
	var results []sseEvent
	for _, ev := range evs {
		if ev.Type == "tool.result" {
			results = append(results, ev)
		}
	}
	if len(results) != 2 {
		t.Fatalf("got tool results %v, want 2", types(evs))
	}
	for i, want := range []string{"OPSAGENT_ALLOW_LOCAL_COMMANDS", `no connector "web-1"`} {
		out, _ := results[i].Data["output"].(string)
		if results[i].Data["is_error"] != true || !strings.Contains(out, want) || !strings.Contains(out, "no approval was requested") {
			t.Fatalf("result %d: got %v, want an error naming %q", i, results[i].Data, want)
		}
		sent := e.toolResultsSent(t, i+1)
		if got := sent[len(sent)-1]; !strings.Contains(got.Content, "refused and did not run") || !strings.Contains(got.Content, want) {
			t.Fatalf("request %d told the model %+v, want the reason %q", i+1, got, want)
		}
	}
	if done := lastOf(t, evs, "done"); done.Data["status"] != "completed" || done.Data["waiting_approval"] == true {
		t.Fatalf("done: %v", done.Data)
	}
	if n := len(c.must(200, "GET", "/api/approvals?session_id="+sid, nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("%d approvals opened for calls that cannot run", n)
	}
}
