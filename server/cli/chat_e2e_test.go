package cli_test

import (
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

func TestChatStreamsTheAnswerAndJSONParsesBack(t *testing.T) {
	s := startServer(t,
		llmfake.ToolCall("search_knowledge", `{"query":"disk full"}`),
		llmfake.Text("The disk on web-1 is 91% full: old logs."),
		llmfake.Text("Rotate them with logrotate."),
		llmfake.Text("One."),
		llmfake.Text("Two."),
	)
	u := s.newUser("ana@example.com")
	env := s.cliEnv(t.TempDir(), u.key) // an API key, never signed in

	// People: the answer, the tool call and its result, a summary on stderr.
	r := ok(t, env, "chat", "why is the disk full?")
	if !strings.Contains(r.stdout, "The disk on web-1 is 91% full: old logs.") || !strings.Contains(r.stdout, "▸ search_knowledge") ||
		!strings.Contains(r.stdout, "✓ search_knowledge") {
		t.Fatalf("chat output:\n%s", r.stdout)
	}
	if strings.Contains(r.stdout+r.stderr, "\x1b[") || strings.Contains(r.stderr, "working…") {
		t.Fatalf("colours or a spinner without a terminal:\n%q\n%q", r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "completed") || !strings.Contains(r.stderr, "session ") {
		t.Fatalf("chat summary: %q", r.stderr)
	}
	sid := r.stderr[strings.LastIndex(r.stderr, "session ")+len("session "):]
	sid = strings.TrimSpace(sid)

	// Scripts: every event once, in order, as JSON lines, for the next turn of the same session.
	r = ok(t, env, "chat", "--json", "--session", sid, "and the fix?")
	evs := jsonLines(t, r.stdout)
	checkOnce(t, evs)
	var text strings.Builder
	deltas := 0
	for _, ev := range evs {
		if ev.Type == "message.delta" {
			deltas++
			text.WriteString(ev.Data["text"].(string))
		}
	}
	if deltas < 2 || text.String() != "Rotate them with logrotate." || evs[0].Type != "session" || evs[0].Data["turn"] != float64(2) {
		t.Fatalf("json events: %d deltas, text %q, first %v", deltas, text.String(), evs[0])
	}
	if done := evs[len(evs)-1]; done.Data["status"] != "completed" {
		t.Fatalf("done: %v", done.Data)
	}

	// The session lists and shows, in all three output forms.
	list := decode[[]map[string]any](t, ok(t, env, "sessions", "list", "--json").stdout)
	if len(list) != 1 || list[0]["id"] != sid || list[0]["status"] != "completed" {
		t.Fatalf("sessions list --json: %v", list)
	}
	if q := ok(t, env, "sessions", "list", "-q").stdout; q != sid+"\n" {
		t.Fatalf("sessions list -q: %q", q)
	}
	if tbl := ok(t, env, "sessions", "list").stdout; !strings.HasPrefix(tbl, "ID ") || !strings.Contains(tbl, sid) {
		t.Fatalf("sessions list:\n%s", tbl)
	}
	show := decode[map[string]any](t, ok(t, env, "sessions", "show", sid, "--json").stdout)
	if show["turns"] != float64(2) || show["tool_calls"] != float64(1) {
		t.Fatalf("sessions show --json: %v", show)
	}
	if tr := ok(t, env, "sessions", "show", sid, "--transcript").stdout; !strings.Contains(tr, "Rotate them with logrotate.") {
		t.Fatalf("transcript:\n%s", tr)
	}
	// Without a message, each line of stdin is the next turn of one new session.
	r = runWithInput(t, "first question\n\n/new\nsecond question\n", env, "chat")
	if r.code != 0 || !strings.Contains(r.stdout, "One.\n") || !strings.Contains(r.stdout, "Two.\n") || !strings.Contains(r.stderr, "new session") {
		t.Fatalf("piped chat: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	if n := len(decode[[]map[string]any](t, ok(t, env, "sessions", "list", "--json").stdout)); n != 3 {
		t.Fatalf("%d sessions after a piped chat with /new, want 3", n)
	}
	exits(t, 3, "not found", env, "sessions", "show", "0192f0c4-0000-7000-8000-000000000000")
	exits(t, 2, "takes 1 argument", env, "sessions", "show")
}

func TestApprovalFromTheCLI(t *testing.T) {
	s := startServer(t,
		llmfake.ToolCall("run_command", `{"command":"echo hello >> hello.log && cat hello.log","target":"server"}`),
		llmfake.Text("It printed hello."),
	)
	u := s.newUser("ops@example.com")
	env := s.cliEnv(t.TempDir(), u.key)

	// Without a terminal nobody is asked: the turn stops, saying how to decide.
	r := ok(t, env, "chat", "say hello on the server")
	if !strings.Contains(r.stdout, "approval needed: run_command") || !strings.Contains(r.stderr, "opsagent approvals approve ") {
		t.Fatalf("waiting chat:\nstdout %s\nstderr %s", r.stdout, r.stderr)
	}
	pending := decode[map[string]any](t, ok(t, env, "approvals", "list", "--json").stdout)
	items := pending["items"].([]any)
	if len(items) != 1 {
		t.Fatalf("pending approvals: %v", pending)
	}
	ap := items[0].(map[string]any)
	id, sid := ap["id"].(string), ap["session_id"].(string)
	if q := ok(t, env, "approvals", "list", "-q").stdout; q != id+"\n" {
		t.Fatalf("approvals list -q: %q", q)
	}

	// A key without the approvals permission is refused: exit 4, the server's words.
	s2 := s.must(201, "POST", "/api/api-keys", u.token, "", map[string]any{"name": "reader", "scopes": []string{"sessions:read", "projects:read"}})
	exits(t, 4, "", s.cliEnv(t.TempDir(), s2["key"].(string)), "approvals", "approve", id)

	r = ok(t, env, "approvals", "approve", id, "--comment", "go ahead")
	if !strings.Contains(r.stdout, "approved") {
		t.Fatalf("approve: %s", r.stdout)
	}
	// Following the session shows the resumed turn to its end.
	r = ok(t, env, "sessions", "show", sid, "--follow")
	if !strings.Contains(r.stdout, "hello") || !strings.Contains(r.stdout, "It printed hello.") {
		t.Fatalf("follow after approval:\n%s", r.stdout)
	}
	show := decode[map[string]any](t, ok(t, env, "sessions", "show", sid, "--json").stdout)
	if show["status"] != "completed" {
		t.Fatalf("session after approval: %v", show)
	}
	exits(t, 1, "", env, "approvals", "approve", id) // decided already: a conflict
	exits(t, 3, "", env, "approvals", "deny", "0192f0c4-0000-7000-8000-000000000000")
}
