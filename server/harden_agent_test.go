package server_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// Without --allow-local-commands and without a connector, run_command has
// nowhere to run: the call is refused at once with the reason (the model
// reads it from the platform), no approval is opened and nobody is paged.
func TestRunCommandThatCannotRunIsRefusedWithoutApproval(t *testing.T) {
	t.Parallel()
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

// Secrets (the project's and the org's) written to files by one call and
// read back by a later call that names no secret are masked all the same:
// every secret of the project and its org is masked in every tool
// output, event, transcript and model request.
func TestSecretReadBackByAnotherCallIsMasked(t *testing.T) {
	t.Parallel()
	const value = "tok_9f8e7d6c5b4a3921"
	const orgValue = "orgsecret_5e6f7a8b9c0d"
	write := `printf '%s' "$API_TOKEN" > token.txt; printf '%s' "$ORG_TOKEN" > org.txt`
	read := `cat token.txt; echo; echo "org: $(cat org.txt)"`
	a1, _ := json.Marshal(map[string]any{"command": write, "target": "server", "secrets": []string{"API_TOKEN", "ORG_TOKEN"}})
	a2, _ := json.Marshal(map[string]any{"command": read, "target": "server"})
	e := newE2E(t,
		llmfake.ToolCall("run_command", string(a1)),
		llmfake.ToolCall("run_command", string(a2)),
		llmfake.Text("I read the file back."),
	)
	e.c.must(200, "PUT", "/api/secrets/API_TOKEN", map[string]any{"value": value})
	e.c.must(200, "PUT", "/api/org-secrets/ORG_TOKEN", map[string]any{"value": orgValue})
	sid, evs := e.chat(t, "save the token and read it back")
	id := e.waitingApproval(t, sid, evs, write)
	last := evs[len(evs)-1].ID
	e.c.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	more := e.watch(t, sid, last)
	id2, _ := lastOf(t, more, "approval.required").Data["approval_id"].(string)
	if id2 == "" {
		t.Fatalf("the second call did not wait for approval: %v", types(more))
	}
	last = more[len(more)-1].ID
	e.c.must(200, "POST", "/api/approvals/"+id2+"/approve", map[string]any{})
	more = e.watch(t, sid, last)
	res := lastOf(t, more, "tool.result")
	out, _ := res.Data["output"].(string)
	if res.Data["is_error"] != false || !strings.Contains(out, "org: ") {
		t.Fatalf("the read-back call: %v", res.Data)
	}
	places := map[string]string{
		"tool.result": out,
		"transcript":  string(e.c.must(200, "GET", "/api/sessions/"+sid+"/transcript", nil).Body),
		"events":      e.rawEvents(t, sid),
		"detail":      string(e.c.must(200, "GET", "/api/sessions/detail/"+sid, nil).Body),
		"log":         e.env.Logs.String(),
	}
	for i, r := range e.fake.Requests() {
		places[fmt.Sprintf("model request %d", i)] = string(r.Body) + r.Text()
	}
	for where, text := range places {
		for _, v := range []string{value, orgValue} {
			if strings.Contains(text, v) {
				t.Errorf("a secret's value appears in the %s", where)
			}
		}
	}
	// The project's work directory is wiped once its agent has been idle
	// for an hour: secrets written to disk do not pile up.
	if _, err := os.Stat(filepath.Join(e.work, "token.txt")); err != nil {
		t.Fatalf("the work directory is gone while the session is fresh: %v", err)
	}
	if err := e.env.Srv.RunPurgeExpired(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.work); err != nil {
		t.Fatalf("the cleanup job wiped a busy project's work directory: %v", err)
	}
	e.env.UseClock()
	e.env.Advance(server.WorkDirIdle + time.Minute)
	if err := e.env.Srv.RunPurgeExpired(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(e.work); !os.IsNotExist(err) {
		t.Fatalf("an idle project's work directory outlived the cleanup job: %v", err)
	}
}
