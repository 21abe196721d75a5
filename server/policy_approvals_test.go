package server_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

func countLines(t *testing.T, p string) int {
	b, err := os.ReadFile(p)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "\n")
}

func TestToolApprovalRunsOnceWithExactArgumentsNeverAfterDenialOrExpiry(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	f.env.UseClock()
	f.run.SessionID = store.NewID()
	f.run.UserID = ""
	log := filepath.Join(f.work, "restarts.log")
	cmd := `{"command":"echo restart >> restarts.log","target":"server"}`

	_, cfg := f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("restarted"), llmfake.Text("again"))
	res := run(t, cfg, "restart the api")
	if res.Status != agent.StatusWaitingApproval {
		t.Fatalf("status %s", res.Status)
	}
	pol := f.env.Srv.PolicyForRun(context.Background(), f.run)
	id, err := pol.OpenApproval(res.Pending)
	if err != nil {
		t.Fatal(err)
	}
	got := f.owner.must(200, "GET", "/api/approvals?kind=tool_call&status=pending", nil).JSON()
	item := got["items"].([]any)[0].(map[string]any)
	subj := item["subject"].(map[string]any)
	if item["id"] != id || subj["command"] != "echo restart >> restarts.log" || subj["target"] != "server" || subj["tool"] != "run_command" ||
		!strings.Contains(item["reason"].(string), "can change things") {
		t.Fatalf("approval: %v", item)
	}
	f.owner.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	f.owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{}) // single decision
	done := resume(t, cfg, res, true, "")
	if done.Status != agent.StatusCompleted || countLines(t, log) != 1 {
		t.Fatalf("after approval: %s, %d runs", done.Status, countLines(t, log))
	}
	// The same approval cannot be used twice (a replayed resume).
	again := resume(t, cfg, res, true, "")
	if r := toolResults(again)[0]; !r.IsError || countLines(t, log) != 1 {
		t.Fatalf("approval used twice: %+v, %d runs", r, countLines(t, log))
	}

	// Byte-identical: an approval for one command does not run another.
	_, cfg = f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("x"), llmfake.Text("y"))
	res = run(t, cfg, "restart")
	id, _ = pol.OpenApproval(res.Pending)
	f.owner.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	tampered := res
	tampered.Transcript = append(tampered.Transcript[:0:0], res.Transcript...)
	last := &tampered.Transcript[len(tampered.Transcript)-1]
	calls := append(last.ToolCalls[:0:0], last.ToolCalls...)
	calls[0].Arguments = []byte(`{"command":"echo restart >> restarts.log ","target":"server"}`)
	last.ToolCalls = calls
	out := resume(t, cfg, tampered, true, "")
	if r := toolResults(out)[0]; !r.IsError || countLines(t, log) != 1 {
		t.Fatalf("changed arguments ran: %+v", r)
	}

	// Denied: never runs. (A new conversation: the approval above, approved
	// but unused, stays valid for its own session's identical call.)
	f.run.SessionID = store.NewID()
	pol = f.env.Srv.PolicyForRun(context.Background(), f.run)
	_, cfg = f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("ok"))
	res = run(t, cfg, "restart")
	id, _ = pol.OpenApproval(res.Pending)
	f.owner.must(200, "POST", "/api/approvals/"+id+"/deny", map[string]any{"comment": "wait for the deploy"})
	resume(t, cfg, res, true, "") // even a runner that resumes as approved
	if countLines(t, log) != 1 {
		t.Fatal("a denied call ran")
	}

	// Expired: approving answers 409 and nothing runs.
	_, cfg = f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("ok"))
	res = run(t, cfg, "restart")
	id, _ = pol.OpenApproval(res.Pending)
	f.env.Advance(2 * time.Hour)
	f.owner.refresh()
	f.owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	resume(t, cfg, res, true, "")
	if countLines(t, log) != 1 {
		t.Fatal("an expired approval ran")
	}

	// A must_never rule added before approval makes approving a conflict.
	_, cfg = f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("ok"))
	res = run(t, cfg, "restart")
	id, _ = pol.OpenApproval(res.Pending)
	f.owner.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "no restarts today", "match_type": "glob", "pattern": "*restart*"})
	r := f.owner.must(409, "POST", "/api/approvals/"+id+"/approve", map[string]any{}).JSON()
	if !strings.Contains(r["detail"].(string), "no restarts today") {
		t.Fatalf("conflict: %v", r)
	}
}

func TestApproveAndRememberAddsARule(t *testing.T) {
	t.Parallel()
	f := newPolicyFixture(t)
	f.run.SessionID = store.NewID()
	cmd := `{"command":"systemctl restart api","target":"server"}`
	_, cfg := f.config(t, llmfake.ToolCall("run_command", cmd), llmfake.Text("ok"))
	res := run(t, cfg, "restart")
	id, err := f.env.Srv.PolicyForRun(context.Background(), f.run).OpenApproval(res.Pending)
	if err != nil {
		t.Fatal(err)
	}
	out := f.owner.must(200, "POST", "/api/approvals/"+id+"/approve-and-remember", map[string]any{"comment": "routine"}).JSON()
	rule := out["rule"].(map[string]any)
	if rule["effect"] != "allow" || rule["pattern"] != "systemctl restart api" || rule["source_approval_id"] != id {
		t.Fatalf("rule: %v", rule)
	}
	if v := evaluate(t, f.owner, "run_command", map[string]any{"command": "systemctl restart api", "target": "server"})["verdict"]; v != "allow" {
		t.Fatalf("remembered command: %v", v)
	}
	if v := evaluate(t, f.owner, "run_command", map[string]any{"command": "systemctl restart db"})["verdict"]; v != "need_approval" {
		t.Fatalf("other command: %v", v)
	}
	// Chained shell commands cannot be remembered.
	_, cfg = f.config(t, llmfake.ToolCall("run_command", `{"command":"systemctl restart api && rm -f /tmp/x"}`), llmfake.Text("ok"))
	res = run(t, cfg, "restart")
	id, _ = f.env.Srv.PolicyForRun(context.Background(), f.run).OpenApproval(res.Pending)
	f.owner.must(409, "POST", "/api/approvals/"+id+"/approve-and-remember", map[string]any{})
	if st := f.owner.must(200, "GET", "/api/approvals/"+id, nil).JSON()["status"]; st != "pending" {
		t.Fatalf("a refused remember decided the approval: %v", st)
	}
}
