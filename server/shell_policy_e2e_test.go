package server_test

import (
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// evaluate asks the rules about a run_command line without running it.
func (e *e2e) evaluate(t *testing.T, line string) map[string]any {
	t.Helper()
	return e.c.must(200, "POST", "/api/rules/evaluate", map[string]any{"tool": "run_command",
		"arguments": map[string]any{"command": line}}).JSON()
}

func TestCommandRulesMatchWhatRunsAndOpaqueIsRelaxedOnlyPerRule(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	rule := e.c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "Never delete files",
		"match_type": "effect", "pattern": "deletes_files"}).JSON()
	id := rule["id"].(string)

	got := e.evaluate(t, `sudo bash -c 'r""m -rf /srv/x'`)
	if got["verdict"] != "block" || got["parsed"] != "rm -rf /srv/x via sudo, bash -c" || got["effects"].([]any)[0] != "deletes_files" {
		t.Fatalf("wrapped rm: %v", got)
	}
	opaque := `X=rm; $X -rf /srv/x`
	got = e.evaluate(t, opaque)
	if got["verdict"] != "block" || !strings.Contains(got["reason"].(string), "cannot prove this command does not break that rule") ||
		len(got["opaque"].([]any)) != 1 {
		t.Fatalf("opaque line: %v", got)
	}
	if got := e.evaluate(t, "grep rm notes.txt"); got["verdict"] != "need_approval" || len(got["opaque"].([]any)) != 0 {
		t.Fatalf("look-alike: %v", got)
	}

	// Relaxing is per rule, visible on it, and does not touch what is proven.
	relaxed := e.c.must(200, "PATCH", "/api/rules/"+id, map[string]any{"allow_opaque": true}).JSON()
	if relaxed["allow_opaque"] != true {
		t.Fatalf("patch: %v", relaxed)
	}
	if got := e.evaluate(t, opaque); got["verdict"] != "need_approval" {
		t.Fatalf("opaque line under a relaxed rule: %v", got)
	}
	if got := e.evaluate(t, "find / -delete"); got["verdict"] != "block" {
		t.Fatalf("find -delete under a relaxed rule: %v", got)
	}

	// Command patterns: the name through paths and globs, the arguments as globs.
	e.c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "Never stop services",
		"tool": "run_command", "match_type": "command", "pattern": "systemctl stop *"})
	for line, want := range map[string]string{"/usr/bin/systemctl stop nginx": "block", "nice systemctl stop nginx": "block",
		"/bin/systemc?l stop nginx": "block", "systemctl status nginx": "need_approval", "echo systemctl stop nginx": "need_approval"} {
		if got := e.evaluate(t, line); got["verdict"] != want {
			t.Errorf("%q: %v, want %s", line, got, want)
		}
	}

	// Text patterns keep working, on the normalized forms too.
	e.c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_never", "description": "Never touch prod",
		"tool": "run_command", "match_type": "regex", "pattern": `^kubectl delete .*prod`})
	if got := e.evaluate(t, `k''ubectl "delete" ns prod`); got["verdict"] != "block" {
		t.Fatalf("regex on the normalized form: %v", got)
	}

	// Bad rules are 422s at the field.
	for _, bad := range []map[string]any{
		{"kind": "must_never", "description": "x", "match_type": "effect", "pattern": "Deletes Files"},
		{"kind": "must_never", "description": "x", "match_type": "command", "pattern": "  "},
		{"kind": "must_never", "description": "x", "tool": "http_request", "match_type": "command", "pattern": "rm"},
		{"kind": "must_always", "description": "x", "tool": "run_command", "match_type": "command", "pattern": "df", "effect": "allow"},
		{"kind": "must_always", "description": "x", "tool": "run_command", "match_type": "glob", "pattern": "df", "allow_opaque": true},
	} {
		e.c.must(422, "POST", "/api/rules", bad)
	}
}

func TestReadOnlyCallsRunUnattendedOnlyWhenProvenAndSaySo(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmfake.ToolCall("run_command", `{"command":"df -h && uptime"}`),
		llmfake.Text("Disk and load look fine."),
	)
	pol := e.c.must(200, "GET", "/api/command-policy", nil).JSON()
	if pol["auto_allow_read_only"] != false || len(pol["builtin_read_only"].([]any)) < 20 || len(pol["categories"].([]any)) < 3 {
		t.Fatalf("default policy: %v", pol)
	}
	if got := e.evaluate(t, "df -h"); got["verdict"] != "need_approval" || got["read_only"] != true {
		t.Fatalf("read-only without the project's consent: %v", got)
	}
	e.c.must(200, "PUT", "/api/command-policy", map[string]any{"auto_allow_read_only": true,
		"read_only_commands": []string{"kubectl top *"}, "effects": map[string][]string{"deletes_files": {"purge-cache"}}})
	for line, want := range map[string]string{
		"df -h; uptime": "allow", "kubectl get pods -A | grep -c Running": "allow", "kubectl top pods": "allow",
		"df -h > out.txt": "need_approval", "kubectl delete pod x": "need_approval", "$CMD": "need_approval",
		"python3 -c 'print(1)'": "need_approval", "find . -name x -delete": "need_approval", "hostname evil": "need_approval",
	} {
		if got := e.evaluate(t, line); got["verdict"] != want {
			t.Errorf("%q: %v, want %s", line, got, want)
		}
	}
	if got := e.evaluate(t, "purge-cache --all"); got["effects"].([]any)[0] != "deletes_files" {
		t.Fatalf("project's effect addition: %v", got)
	}
	e.c.must(422, "PUT", "/api/command-policy", map[string]any{"effects": map[string][]string{"Bad Name": {"x"}}})
	e.c.must(422, "PUT", "/api/command-policy", map[string]any{"read_only_commands": []string{"!x"}})

	// The automatic decision is explained on the call.
	sid, evs := e.chat(t, "how is the host?")
	res := lastOf(t, evs, "tool.result")
	out := res.Data["output"].(string)
	if res.Data["is_error"] != false || !strings.Contains(out, "[policy] ran without a person") || !strings.Contains(out, "df -h; uptime") ||
		!strings.Contains(out, "exit code 0") {
		t.Fatalf("auto-allowed result: %v", res.Data)
	}
	if n := len(e.c.must(200, "GET", "/api/approvals?session_id="+sid, nil).JSON()["items"].([]any)); n != 0 {
		t.Fatalf("%d approvals for a proven read-only call", n)
	}
	if tr := string(e.c.must(200, "GET", "/api/sessions/"+sid+"/transcript", nil).Body); !strings.Contains(tr, "ran without a person") {
		t.Fatal("the transcript does not explain the automatic decision")
	}
}

func TestApprovalCardSaysWhatTheCommandWasParsedAs(t *testing.T) {
	t.Parallel()
	args := `{"command":"bash -c 'echo hi >> hello.log'"}`
	e := newE2E(t, llmfake.ToolCall("run_command", args), llmfake.Text("Done."))
	sid, evs := e.chat(t, "say hi")
	id := e.waitingApproval(t, sid, evs, "bash -c 'echo hi >> hello.log'")
	a := e.c.must(200, "GET", "/api/approvals/"+id, nil).JSON()
	subj := a["subject"].(map[string]any)
	if subj["parsed"] != "echo hi via bash -c" || !strings.Contains(a["reason"].(string), "Parsed as: echo hi via bash -c") {
		t.Fatalf("approval card: %v", a)
	}
	last := evs[len(evs)-1].ID
	e.c.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
	more := e.watch(t, sid, last)
	if out := lastOf(t, more, "tool.result").Data["output"].(string); !strings.Contains(out, "[policy] ran with a person's approval") ||
		!strings.Contains(out, "Parsed as: echo hi via bash -c") {
		t.Fatalf("approved result: %s", out)
	}
}
