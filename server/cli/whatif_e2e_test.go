package cli_test

import (
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// What-if before anything runs: a shadow rule on trial records the call it
// would have blocked, a preview of the same rule replays the recorded call,
// evaluate decides one call; each in the three output forms, with exit 3 for
// what is not there and exit 2 for bad input (ours or the server's 422).
func TestRulesWhatIf(t *testing.T) {
	s := startServer(t, llmfake.ToolCall("search_knowledge", `{"query":"disk full"}`), llmfake.Text("Nothing about disks."))
	u := s.newUser("sre@example.com")
	env := s.cliEnv(t.TempDir(), u.key)
	rule := []string{"--kind", "must_never", "--description", "no knowledge searches", "--tool", "search_knowledge"}

	created := ok(t, env, append([]string{"rules", "shadow", "create", "--trial", "3"}, rule...)...).stdout
	if !strings.Contains(created, "no knowledge searches") || !strings.Contains(created, "until ") || !strings.Contains(created, "block") {
		t.Fatalf("rules shadow create:\n%s", created)
	}
	shadowID := strings.TrimSpace(ok(t, env, "rules", "shadow", "list", "-q").stdout)
	exits(t, 2, "must match calls", env, "rules", "shadow", "create", "--kind", "must_never", "--description", "x")
	exits(t, 2, "--kind must be must_never or must_always", env, "rules", "shadow", "create", "--description", "x", "--tool", "y")
	exits(t, 2, "body.trial_days", env, append([]string{"rules", "shadow", "create", "--trial", "100"}, rule...)...)

	// The agent searches; the shadow rule decides nothing and records it.
	sid := ok(t, env, "chat", "-q", "is there a runbook for full disks?").stdout
	sid = strings.TrimSpace(sid)
	list := ok(t, env, "rules", "shadow", "list").stdout
	if !strings.Contains(list, shadowID) || !strings.Contains(list, "HITS") || !strings.Contains(list, "search_knowledge") {
		t.Fatalf("rules shadow list:\n%s", list)
	}
	shadows := decode[map[string]any](t, ok(t, env, "rules", "shadow", "list", "--json").stdout)["items"].([]any)
	if len(shadows) != 1 || shadows[0].(map[string]any)["hits"] != 1.0 {
		t.Fatalf("rules shadow list --json: %v", shadows)
	}
	shown := ok(t, env, "rules", "shadow", "show", shadowID).stdout
	if !strings.Contains(shown, "DECIDED") || !strings.Contains(shown, "allow") || !strings.Contains(shown, "block") {
		t.Fatalf("rules shadow show:\n%s", shown)
	}
	if got := decode[map[string]any](t, ok(t, env, "rules", "shadow", "show", shadowID, "--json").stdout); len(got["recorded"].([]any)) != 1 {
		t.Fatalf("rules shadow show --json: %v", got)
	}
	exits(t, 3, "", env, "rules", "shadow", "show", unknownID)

	// The same rule previewed against what was recorded.
	prev := ok(t, env, append([]string{"rules", "preview"}, rule...)...).stdout
	if !strings.Contains(prev, "newly blocked") || !strings.Contains(prev, "allow → block") || !strings.Contains(prev, sid) {
		t.Fatalf("rules preview:\n%s", prev)
	}
	pj := decode[map[string]any](t, ok(t, env, append([]string{"rules", "preview", "--json", "--days", "1"}, rule...)...).stdout)
	if pj["newly_blocked"] != 1.0 || pj["days"] != 1.0 || pj["changes"].([]any)[0].(map[string]any)["session_id"] != sid {
		t.Fatalf("rules preview --json: %v", pj)
	}
	if q := ok(t, env, append([]string{"rules", "preview", "-q"}, rule...)...).stdout; q != sid+"\n" {
		t.Fatalf("rules preview -q: %q", q)
	}
	fromStdin := runWithInput(t, `[{"kind":"must_never","description":"from a file","tool":"search_knowledge"}]`, env, "rules", "preview", "--json", "--file", "-")
	if fromStdin.code != 0 || decode[map[string]any](t, fromStdin.stdout)["newly_blocked"] != 1.0 {
		t.Fatalf("rules preview --file -: %d %s %s", fromStdin.code, fromStdin.stdout, fromStdin.stderr)
	}
	exits(t, 2, "nothing to preview", env, "rules", "preview")
	exits(t, 2, "body.days", env, append([]string{"rules", "preview", "--days", "100"}, rule...)...)
	exits(t, 2, "body.remove.0", env, "rules", "preview", "--remove", unknownID)

	// One call decided against the live rules.
	ev := ok(t, env, "rules", "evaluate", "--command", "rm -rf /var/lib/app").stdout
	if !strings.Contains(ev, "verdict") || !strings.Contains(ev, "effects") || !strings.Contains(ev, "rm -rf /var/lib/app") {
		t.Fatalf("rules evaluate:\n%s", ev)
	}
	if got := decode[map[string]any](t, ok(t, env, "rules", "evaluate", "--json", "--command", "ls /tmp").stdout); got["verdict"] == nil || got["read_only"] != true {
		t.Fatalf("rules evaluate --json: %v", got)
	}
	exits(t, 2, "give either --command", env, "rules", "evaluate")
	exits(t, 2, "--args must be a JSON object", env, "rules", "evaluate", "--tool", "run_command", "--args", "[1]")
	exits(t, 2, "no tool named nope", env, "rules", "evaluate", "--tool", "nope")

	// Promote it: a live rule now; the shadow is gone. Delete another.
	if out := ok(t, env, "rules", "shadow", "promote", shadowID).stdout; !strings.Contains(out, "Promoted: rule ") || !strings.Contains(out, "is live") {
		t.Fatalf("rules shadow promote:\n%s", out)
	}
	if live := s.must(200, "GET", "/api/rules", u.token, u.project, nil); live["total"] != 1.0 {
		t.Fatalf("live rules after promote: %v", live)
	}
	if out := ok(t, env, "rules", "list").stdout; !strings.Contains(out, "no knowledge searches") || !strings.Contains(out, "project") || !strings.Contains(out, "enabled") {
		t.Fatalf("rules list:\n%s", out)
	}
	liveID := strings.TrimSpace(ok(t, env, "rules", "list", "-q").stdout)
	if got := decode[map[string]any](t, ok(t, env, "rules", "list", "--json").stdout); got["items"].([]any)[0].(map[string]any)["id"] != liveID {
		t.Fatalf("rules list --json: %v", got)
	}
	// Taking the live rule away would let the recorded search through again.
	if back := decode[map[string]any](t, ok(t, env, "rules", "preview", "--json", "--remove", liveID).stdout); back["newly_allowed"] != 1.0 {
		t.Fatalf("rules preview --remove: %v", back)
	}
	exits(t, 3, "", env, "rules", "shadow", "promote", unknownID)
	other := decode[map[string]any](t, ok(t, env, "rules", "shadow", "create", "--json", "--kind", "must_always", "--description", "ask before restarts",
		"--tool", "run_command", "--match", "command", "--pattern", "systemctl restart *").stdout)
	if other["effect"] != "require_approval" || other["shadow"] != true {
		t.Fatalf("rules shadow create --json: %v", other)
	}
	if out := ok(t, env, "rules", "shadow", "delete", other["id"].(string)).stdout; !strings.Contains(out, "Deleted shadow rule") {
		t.Fatalf("rules shadow delete: %s", out)
	}
	exits(t, 3, "", env, "rules", "shadow", "delete", other["id"].(string))
}

// tasks preview (a saved task or a draft) and webhooks match (a routing
// condition tried on a received event).
func TestTaskPreviewAndWebhookMatch(t *testing.T) {
	s := startServer(t, llmfake.Always(llmfake.Text("Looked at it.")))
	u := s.newUser("ops@example.com")
	env := s.cliEnv(t.TempDir(), u.key)

	task := decode[map[string]any](t, ok(t, env, "tasks", "create", "--json", "--name", "Nightly disk check", "--prompt", "Check disk usage on all hosts",
		"--schedule", "0 2 * * *", "--timezone", "Europe/Paris").stdout)
	id := task["id"].(string)
	out := ok(t, env, "tasks", "preview", id).stdout
	if !strings.Contains(out, "NEXT RUN") || !strings.Contains(out, "0 2 * * * (Europe/Paris)") || !strings.Contains(out, "T02:00:00+0") /* +01:00 or +02:00 in summer */ ||
		!strings.Contains(out, "Prompt the agent receives:") || !strings.Contains(out, "Check disk usage on all hosts") {
		t.Fatalf("tasks preview:\n%s", out)
	}
	p := decode[map[string]any](t, ok(t, env, "tasks", "preview", id, "--json", "--count", "3").stdout)
	if p["task_id"] != id || len(p["next_runs"].([]any)) != 3 {
		t.Fatalf("tasks preview --json: %v", p)
	}
	draft := ok(t, env, "tasks", "preview", "--name", "probe", "--prompt", "Ping the gateway", "--disabled").stdout
	if !strings.Contains(draft, "Ping the gateway") || !strings.Contains(draft, "on demand only") || !strings.Contains(draft, "warning: the task is disabled") {
		t.Fatalf("tasks preview of a draft:\n%s", draft)
	}
	if q := ok(t, env, "tasks", "preview", id, "-q").stdout; q != id+"\n" {
		t.Fatalf("tasks preview -q: %q", q)
	}
	exits(t, 3, "", env, "tasks", "preview", unknownID)
	exits(t, 2, "give a task id, or a draft", env, "tasks", "preview")
	exits(t, 2, "not both", env, "tasks", "preview", id, "--name", "x")
	exits(t, 2, "schedule", env, "tasks", "preview", "--name", "x", "--prompt", "y", "--schedule", "every tuesday")

	taskID, eventID, _ := alertIncident(t, s, u, env)
	m := ok(t, env, "webhooks", "match", eventID, "--task", "CPU alerts", "--condition", `provider == "alertmanager"`).stdout
	if !strings.HasPrefix(m, "matched: alertmanager event "+eventID) {
		t.Fatalf("webhooks match:\n%s", m)
	}
	no := decode[map[string]any](t, ok(t, env, "webhooks", "match", eventID, "--task", taskID, "--json", "--condition", `provider == "grafana"`).stdout)
	if no["matched"] != false || no["provider"] != "alertmanager" {
		t.Fatalf("webhooks match --json: %v", no)
	}
	if q := ok(t, env, "webhooks", "match", eventID, "-t", taskID, "-q", "--condition", `provider == "grafana"`).stdout; q != "" {
		t.Fatalf("webhooks match -q without a match printed %q", q)
	}
	exits(t, 3, "", env, "webhooks", "match", unknownID, "--task", taskID, "--condition", "true")
	exits(t, 3, `no task named "nope"`, env, "webhooks", "match", eventID, "--task", "nope", "--condition", "true")
	exits(t, 2, "--condition is required", env, "webhooks", "match", eventID, "--task", taskID)
	exits(t, 2, "body.condition", env, "webhooks", "match", eventID, "--task", taskID, "--condition", "provider ==")
}
