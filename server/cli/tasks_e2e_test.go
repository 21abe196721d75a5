package cli_test

import (
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

func TestTaskLifeCycle(t *testing.T) {
	s := startServer(t, llmfake.Text("All hosts are healthy."), llmfake.Text("Still healthy an hour later."))
	u := s.newUser("lead@example.com")
	env := s.cliEnv(t.TempDir(), u.key)

	task := decode[map[string]any](t, ok(t, env, "tasks", "create", "--json", "--name", "Nightly health",
		"--prompt", "Check the fleet", "--schedule", "0 2 * * *", "--timezone", "Europe/Paris").stdout)
	id := task["id"].(string)
	if task["enabled"] != true || task["schedule"] != "0 2 * * *" || task["next_run_at"] == nil {
		t.Fatalf("created: %v", task)
	}
	if q := ok(t, env, "tasks", "list", "-q").stdout; q != id+"\n" {
		t.Fatalf("tasks list -q: %q", q)
	}
	if tbl := ok(t, env, "tasks", "list").stdout; !strings.Contains(tbl, "Nightly health") || !strings.Contains(tbl, "0 2 * * *") {
		t.Fatalf("tasks list:\n%s", tbl)
	}
	edited := decode[map[string]any](t, ok(t, env, "tasks", "edit", id, "--schedule", "@hourly", "--json").stdout)
	if edited["schedule"] != "@hourly" || edited["name"] != "Nightly health" {
		t.Fatalf("edited: %v", edited)
	}
	off := decode[map[string]any](t, ok(t, env, "tasks", "disable", id, "--json").stdout)
	if off["enabled"] != false || off["next_run_at"] != nil {
		t.Fatalf("disabled: %v", off)
	}
	// A disabled task does not run: the server's reason, exit 1.
	exits(t, 1, "disabled", env, "tasks", "trigger", id)
	ok(t, env, "tasks", "enable", id)

	// Triggered and followed to its end.
	r := ok(t, env, "tasks", "trigger", id, "--follow")
	if !strings.Contains(r.stdout, "All hosts are healthy.") {
		t.Fatalf("trigger --follow:\n%s\n%s", r.stdout, r.stderr)
	}
	// The stream ends with the turn's last event and the run's status is
	// saved just after it: read the runs until it says completed.
	var runs map[string]any
	var items []any
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		runs = decode[map[string]any](t, ok(t, env, "tasks", "runs", id, "--json").stdout)
		items = runs["items"].([]any)
		if len(items) != 1 || items[0].(map[string]any)["status"] != "running" || time.Now().After(deadline) {
			break
		}
	}
	if len(items) != 1 || items[0].(map[string]any)["status"] != "completed" || items[0].(map[string]any)["task_id"] != id {
		t.Fatalf("runs: %v", runs)
	}
	// A run's session continues with a new prompt, followed to its end.
	run1 := items[0].(map[string]any)["id"].(string)
	if r := ok(t, env, "sessions", "resume", run1, "check again"); !strings.Contains(r.stdout, "Still healthy an hour later.") {
		t.Fatalf("sessions resume:\n%s\n%s", r.stdout, r.stderr)
	}
	// The stream ends with the turn's last event; the session's status is
	// saved just after it: cancel once it reads completed.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		show := decode[map[string]any](t, ok(t, env, "sessions", "show", run1, "--json").stdout)
		if show["status"] == "completed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("session after resume: %v", show["status"])
		}
	}
	exits(t, 1, "not running", env, "sessions", "cancel", run1)
	shown := ok(t, env, "tasks", "show", id).stdout
	if !strings.Contains(shown, "completed") || !strings.Contains(shown, "Check the fleet") {
		t.Fatalf("tasks show:\n%s", shown)
	}

	// Bad input: usage errors exit 2, the server's validation too; unknown ids exit 3.
	exits(t, 2, "--name and --prompt are required", env, "tasks", "create", "--prompt", "x")
	exits(t, 2, "schedule", env, "tasks", "create", "--name", "x", "--prompt", "y", "--schedule", "every tuesday")
	exits(t, 2, "nothing to change", env, "tasks", "edit", id)
	exits(t, 3, "not found", env, "tasks", "show", "0192f0c4-0000-7000-8000-000000000000")
	exits(t, 3, "", env, "tasks", "runs", "0192f0c4-0000-7000-8000-000000000000")
}

func TestUsageErrorsHelpAndCompletion(t *testing.T) {
	env := baseEnv(t.TempDir())
	for _, c := range []string{"serve", "login", "logout", "chat", "sessions", "tasks", "approvals", "incidents", "webhooks",
		"projects", "whoami", "completion", "backup", "restore", "vault", "version", "tasks trigger", "webhooks events", "projects use"} {
		r := ok(t, env, append(strings.Fields(c), "--help")...)
		if r.stdout+r.stderr == "" {
			t.Fatalf("%s --help printed nothing", c)
		}
	}
	exits(t, 2, `unknown command "frobnicate"`, env, "frobnicate")
	exits(t, 2, "unknown flag: --frob", env, "tasks", "list", "--frob")
	exits(t, 2, `unknown subcommand "frob"`, env, "tasks", "frob")
	exits(t, 2, "needs a subcommand", env, "approvals")
	exits(t, 2, "--json and --quiet", env, "tasks", "list", "--json", "-q")
	exits(t, 2, "unsupported shell", env, "completion", "tcsh")
	exits(t, 2, "--task is required", env, "webhooks", "events")
	exits(t, 2, "the message is empty", env, "chat", " ")
	exits(t, 2, "do not go with --session", env, "chat", "--session", "x", "--name", "y", "hello")
	exits(t, 2, "takes 0 to 1 arguments", env, "chat", "one", "two")
	// No sign-in and no token: one line saying what to do, exit 4.
	r := exits(t, 4, "not signed in: run `opsagent login", env, "whoami")
	if strings.Count(strings.TrimSpace(r.stderr), "\n") != 0 {
		t.Fatalf("more than one line: %q", r.stderr)
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		if r := ok(t, env, "completion", sh); !strings.Contains(r.stdout, "opsagent") {
			t.Fatalf("completion %s:\n%s", sh, r.stdout)
		}
	}
	// The scripts ask the binary for candidates; every subcommand is offered.
	cands := ok(t, env, "__complete", "").stdout
	for _, want := range []string{"chat", "tasks", "serve", "login", "completion"} {
		if !strings.Contains(cands, want+"\t") {
			t.Fatalf("completion candidates lack %s:\n%s", want, cands)
		}
	}
	if sub := ok(t, env, "__complete", "tasks", "").stdout; !strings.Contains(sub, "trigger") {
		t.Fatalf("tasks subcommand candidates:\n%s", sub)
	}
}

func TestProjectsUseRemembersTheProjectPerProfile(t *testing.T) {
	s := startServer(t)
	u := s.newUser("pm@example.com")
	second := s.must(201, "POST", "/api/projects", u.token, "", map[string]any{"name": "Staging"})["id"].(string)
	home := t.TempDir()
	env := s.cliEnv(home, u.key)

	// Two projects and none chosen: the client cannot guess.
	exits(t, 2, "no project chosen", env, "tasks", "list")
	if q := ok(t, env, "projects", "list", "-q").stdout; !strings.Contains(q, u.project) || !strings.Contains(q, second) {
		t.Fatalf("projects list -q: %q", q)
	}
	ok(t, env, "projects", "use", "staging")
	ok(t, env, "tasks", "create", "--name", "in staging", "--prompt", "p")
	list := ok(t, env, "projects", "list").stdout
	if !strings.Contains(list, "* ") || !strings.Contains(list, second) {
		t.Fatalf("projects list marks no current project:\n%s", list)
	}
	// --project wins over the remembered one; names and ids both work.
	if q := ok(t, env, "tasks", "list", "-q", "--project", "prod").stdout; q != "" {
		t.Fatalf("tasks in prod: %q", q)
	}
	if q := ok(t, env, "tasks", "list", "-q", "--project", second).stdout; strings.Count(q, "\n") != 1 {
		t.Fatalf("tasks in staging: %q", q)
	}
	// Another profile has its own current project.
	exits(t, 2, "no project chosen", append(env, "OPSAGENT_PROFILE=other"), "tasks", "list")
	exits(t, 3, `no project "nope"`, env, "projects", "use", "nope")
	who := ok(t, env, "whoami").stdout
	if !strings.Contains(who, "pm@example.com") || !strings.Contains(who, "Staging") || !strings.Contains(who, "API key") {
		t.Fatalf("whoami:\n%s", who)
	}
	// The organization by its name, not only its id.
	org := s.must(200, "GET", "/api/auth/me", u.token, "", nil)["current_org_id"].(string)
	s.must(200, "PATCH", "/api/organizations/"+org, u.token, "", map[string]any{"name": "Acme Operations"})
	if who := ok(t, env, "whoami").stdout; !strings.Contains(who, "Acme Operations ("+org+")") {
		t.Fatalf("whoami does not name the organization:\n%s", who)
	}
	// A bad token is the server's refusal, exit 4.
	exits(t, 4, "refused OPSAGENT_TOKEN", s.cliEnv(home, "opsk_notakey"), "whoami")
}
