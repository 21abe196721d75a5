package server_test

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The connector end to end: the real binary serves, three connector
// processes of the same binary dial it on loopback, and a scripted model
// calls run_command on them through the agent, with the real policy,
// approvals, secrets and event streams in between.
func TestConnectorEndToEnd(t *testing.T) {
	w := newConnWorld(t)
	c := w.c
	// Pre-approve commands without shell control characters; anything
	// chaining or substituting still waits for a person.
	c.must(201, "POST", "/api/rules", map[string]any{"kind": "must_always", "description": "routine commands run without asking",
		"effect": "allow", "tool": "run_command", "match_type": "glob", "pattern": "*"})
	tok1, id1 := w.enroll(c, "db-1", map[string]string{"env": "prod", "role": "db"})
	tok2, _ := w.enroll(c, "db-2", map[string]string{"env": "prod"})
	tok3, _ := w.enroll(c, "web-1", map[string]string{"env": "prod", "role": "web"})
	allow := filepath.Join(t.TempDir(), "allow")
	if err := os.WriteFile(allow, []byte("# web-1 runs only these\necho *\nsleep *\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	db1 := w.runHost("db-1", tok1)
	db2 := w.runHost("db-2", tok2, "--labels", "role=db") // the host adds role=db itself
	web1 := w.runHost("web-1", tok3, "--allow", allow)
	w.waitOnline(c, "db-1", "db-2", "web-1")

	t.Run("list shows status, host facts and merged labels", func(t *testing.T) {
		list := c.must(200, "GET", "/api/connectors", nil).JSON()
		if list["total"] != 3.0 || list["online"] != 3.0 {
			t.Fatalf("list: %v", list)
		}
		got := c.must(200, "GET", "/api/connectors/"+id1, nil).JSON()
		host, _ := os.Hostname()
		if got["status"] != "online" || got["hostname"] != host || got["os"] != "linux" || got["version"] == "" || got["last_seen"] == nil {
			t.Fatalf("connector: %v", got)
		}
		for _, it := range list["items"].([]any) {
			m := it.(map[string]any)
			if m["name"] == "db-2" && m["labels"].(map[string]any)["role"] != "db" {
				t.Fatalf("db-2's host label is not merged: %v", m)
			}
			if _, leaked := m["token"]; leaked {
				t.Fatalf("a listed connector carries its token: %v", m)
			}
		}
	})

	t.Run("one connector by name, output streamed live", func(t *testing.T) {
		_, evs := w.runCommand(c, map[string]any{"target": "db-1", "command": "./mark by-name"})
		out, res := toolResult(t, evs)
		if res["is_error"] != false || !strings.Contains(out, "exit code 0") || !strings.Contains(out, "marked by-name on db-1") {
			t.Fatalf("tool.result: %v", res)
		}
		live := lastOf(t, evs, "tool.output")
		if live.Data["host"] != "db-1" || !strings.Contains(live.Data["text"].(string), "marked by-name") || live.ID > lastOf(t, evs, "tool.result").ID {
			t.Fatalf("tool.output: %v", live.Data)
		}
		if !slices.Equal(db1.runs(), []string{"by-name"}) || len(db2.runs()) != 0 || len(web1.runs()) != 0 {
			t.Fatalf("runs: db-1 %v, db-2 %v, web-1 %v", db1.runs(), db2.runs(), web1.runs())
		}
	})

	t.Run("several connectors by label selector", func(t *testing.T) {
		_, evs := w.runCommand(c, map[string]any{"target": "env=prod,role=db", "command": "./mark by-label"})
		out, res := toolResult(t, evs)
		if res["is_error"] != false || !strings.Contains(out, "ran on 2 connectors") ||
			!strings.Contains(out, "marked by-label on db-1") || !strings.Contains(out, "marked by-label on db-2") {
			t.Fatalf("tool.result: %v", out)
		}
		if !slices.Contains(db1.runs(), "by-label") || !slices.Contains(db2.runs(), "by-label") || len(web1.runs()) != 0 {
			t.Fatalf("runs: db-1 %v, db-2 %v, web-1 %v", db1.runs(), db2.runs(), web1.runs())
		}
	})

	t.Run("the host allow-list has the last word", func(t *testing.T) {
		n := len(w.fake.Requests())
		_, evs := w.runCommand(c, map[string]any{"target": "web-1", "command": "./mark refused"})
		out, res := toolResult(t, evs)
		if res["is_error"] != true || res["blocked"] != true || !strings.Contains(out, "refused by the host web-1") || !strings.Contains(out, "allow-list") {
			t.Fatalf("tool.result: %v", res)
		}
		if len(web1.runs()) != 0 {
			t.Fatalf("web-1 ran a refused command: %v", web1.runs())
		}
		sent := w.fake.Requests()[n+1].ToolResults()
		if len(sent) != 1 || !strings.Contains(sent[0].Content, "refused and did not run") {
			t.Fatalf("the model must read the refusal as the platform's words: %+v", sent)
		}
		_, evs = w.runCommand(c, map[string]any{"target": "web-1", "command": "echo allowed here"})
		if out, _ := toolResult(t, evs); !strings.Contains(out, "exit code 0") || !strings.Contains(out, "allowed here") {
			t.Fatalf("an allowed command on web-1: %v", out)
		}
	})

	t.Run("unknown or offline targets are refused at once, no approval", func(t *testing.T) {
		_, evs := w.runCommand(c, map[string]any{"target": "db-9", "command": "./mark x && echo y"})
		out, res := toolResult(t, evs)
		if res["blocked"] != true || !strings.Contains(out, `no connector "db-9"`) || !strings.Contains(out, "db-1, db-2, web-1") {
			t.Fatalf("unknown target: %v", res)
		}
		pending := c.must(200, "GET", "/api/approvals?status=pending", nil).JSON()
		if pending["total"] != 0.0 {
			t.Fatalf("an approval was opened for a target that cannot run: %v", pending)
		}
	})

	t.Run("approval gating shows the exact hosts and command", func(t *testing.T) {
		before := len(db1.runs())
		sid, evs := w.runCommand(c, map[string]any{"target": "role=db", "command": "./mark gated && echo chained"})
		ar := lastOf(t, evs, "approval.required")
		if len(db1.runs()) != before {
			t.Fatal("a gated command ran before approval")
		}
		page := c.must(200, "GET", "/api/approvals?status=pending&kind=tool_call", nil).JSON()
		item := page["items"].([]any)[0].(map[string]any)
		subj := item["subject"].(map[string]any)
		host, _ := os.Hostname()
		if subj["command"] != "./mark gated && echo chained" || !strings.Contains(subj["target"].(string), "db-1 ("+host+")") ||
			!strings.Contains(subj["target"].(string), "db-2") || strings.Contains(subj["target"].(string), "web-1") {
			t.Fatalf("approval subject: %v", subj)
		}
		c.must(200, "POST", "/api/approvals/"+ar.Data["approval_id"].(string)+"/approve", map[string]any{"comment": "go"})
		more := w.watch(c, sid, evs[len(evs)-1].ID)
		if out, _ := toolResult(t, more); !strings.Contains(out, "marked gated on db-1") || !strings.Contains(out, "chained") {
			t.Fatalf("after approval: %v", out)
		}
		if !slices.Contains(db1.runs(), "gated") || !slices.Contains(db2.runs(), "gated") {
			t.Fatalf("runs after approval: %v %v", db1.runs(), db2.runs())
		}
	})

	t.Run("a selector approved for some hosts does not reach others", func(t *testing.T) {
		before := len(db1.runs())
		sid, evs := w.runCommand(c, map[string]any{"target": "role=db", "command": "./mark drift && echo x"})
		ar := lastOf(t, evs, "approval.required")
		tok4, id4 := w.enroll(c, "db-3", map[string]string{"role": "db"})
		db3 := w.runHost("db-3", tok4)
		w.waitOnline(c, "db-3")
		c.must(200, "POST", "/api/approvals/"+ar.Data["approval_id"].(string)+"/approve", map[string]any{})
		out, res := toolResult(t, w.watch(c, sid, evs[len(evs)-1].ID))
		if res["blocked"] != true || !strings.Contains(out, "changed since the approval") {
			t.Fatalf("a host joined the selector after approval: %v", res)
		}
		if len(db1.runs()) != before || len(db3.runs()) != 0 {
			t.Fatalf("ran anyway: db-1 %v, db-3 %v", db1.runs(), db3.runs())
		}
		// Deleting a connector drops it, and its token no longer opens the channel.
		c.must(204, "DELETE", "/api/connectors/"+id4, nil)
		select {
		case <-db3.done:
		case <-time.After(10 * time.Second):
			t.Fatalf("a deleted connector still runs:\n%s", db3.logs.String())
		}
	})

	t.Run("timeout kills the whole process group", func(t *testing.T) {
		_, evs := w.runCommand(c, map[string]any{"target": "db-1", "command": "./spawn", "timeout_seconds": 1})
		out, _ := toolResult(t, evs)
		if !strings.Contains(out, "timed out after 1s") || !strings.Contains(out, "spawned") {
			t.Fatalf("timeout: %v", out)
		}
		b, err := os.ReadFile(filepath.Join(db1.dir, "bg.pid"))
		pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid == 0 {
			t.Fatalf("bg.pid: %v", err)
		}
		waitFor(t, 3*time.Second, "the background child dies with its group", func() bool {
			return syscall.Kill(pid, 0) != nil
		})
	})

	t.Run("a frozen connector ends its call as lost within the heartbeat window", func(t *testing.T) {
		evs := w.asyncChat(c, map[string]any{"target": "web-1", "command": "sleep 20"}, true)
		until(t, evs, "tool.call", 10*time.Second)
		waitFor(t, 5*time.Second, "web-1 runs the command", func() bool {
			return strings.Contains(web1.logs.String(), "connector: running")
		})
		_ = web1.cmd.Process.Signal(syscall.SIGSTOP)
		start := time.Now()
		res := until(t, evs, "tool.result", 10*time.Second)
		if took := time.Since(start); !strings.Contains(res.Data["output"].(string), "connector lost") || took > 3*time.Second {
			t.Fatalf("after %s: %v", took, res.Data)
		}
		_ = web1.cmd.Process.Signal(syscall.SIGCONT)
		w.waitOnline(c, "web-1")
	})

	t.Run("a connector killed mid-command ends the call at once", func(t *testing.T) {
		evs := w.asyncChat(c, map[string]any{"target": "db-2", "command": "./slowmark killed"}, true)
		until(t, evs, "tool.output", 10*time.Second)
		_ = db2.cmd.Process.Kill()
		res := until(t, evs, "tool.result", 5*time.Second)
		if !strings.Contains(res.Data["output"].(string), "connector lost") {
			t.Fatalf("tool.result: %v", res.Data)
		}
		<-db2.done
		db2 = w.startHost("db-2", db2.dir, tok2, "--labels", "role=db")
		w.waitOnline(c, "db-2")
	})

	t.Run("server restart: connectors reconnect and nothing runs twice", func(t *testing.T) {
		// The model's answer is for the turn resumed after the restart.
		evs := w.asyncChat(c, map[string]any{"target": "db-1", "command": "./slowmark inflight"}, true)
		sid := until(t, evs, "session", 10*time.Second).Data["session_id"].(string)
		until(t, evs, "tool.output", 10*time.Second)
		w.stop()
		w.start()
		w.waitOnline(c, "db-1", "db-2", "web-1")
		// The cut turn resumes from its checkpoint: the command that was in
		// flight is not run again, and the model is told its outcome is unknown.
		if d := waitSession(t, c, sid, func(d map[string]any) bool { return d["status"] != "running" }); d["status"] != "completed" {
			t.Fatalf("the resumed turn: %v", d)
		}
		_, replay := c.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, nil)
		if out, _ := toolResult(t, replay); !strings.Contains(out, "interrupted; outcome unknown") {
			t.Fatalf("the resumed turn's result of the cut call: %q", out)
		}
		_, out := w.runCommand(c, map[string]any{"target": "role=db", "command": "./mark after-restart"})
		if o, _ := toolResult(t, out); !strings.Contains(o, "ran on 2 connectors") {
			t.Fatalf("after restart: %v", o)
		}
		time.Sleep(time.Second) // anything replayed would have run by now
		count := func(h *hostProc, s string) int {
			n := 0
			for _, r := range h.runs() {
				if r == s {
					n++
				}
			}
			return n
		}
		if count(db1, "inflight") != 1 || count(db1, "after-restart") != 1 || count(db2, "after-restart") != 1 {
			t.Fatalf("runs: db-1 %v, db-2 %v", db1.runs(), db2.runs())
		}
		if slices.Contains(db1.runs(), "finished") {
			t.Fatal("the in-flight command was left running after its connection dropped")
		}
	})

	t.Run("secrets travel only when named and are masked in everything sent back", func(t *testing.T) {
		c.must(200, "PUT", "/api/secrets/DB_PASSWORD", map[string]any{"value": "hunter2-db-secret-value"})
		c.must(200, "PUT", "/api/org-secrets/ORG_TOKEN", map[string]any{"value": "org-level-token-777"})
		// The host holds the org token in a file of its own: still masked.
		if err := os.WriteFile(filepath.Join(db1.dir, "host-file.txt"), []byte("token=org-level-token-777\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		sid, evs := w.runCommand(c, map[string]any{"target": "db-1", "command": "./showenv", "secrets": []string{"DB_PASSWORD"}})
		out, _ := toolResult(t, evs)
		if !strings.Contains(out, "DB_PASSWORD=********") || !strings.Contains(out, "token=********") {
			t.Fatalf("masked output: %v", out)
		}
		_, evs = w.runCommand(c, map[string]any{"target": "db-1", "command": "./showenv"})
		if out, _ := toolResult(t, evs); !strings.Contains(out, "DB_PASSWORD=unset") {
			t.Fatalf("an unnamed secret reached the host: %v", out)
		}
		raw := string(c.must(200, "GET", "/api/sessions/"+sid+"/events", nil).Body)
		if strings.Contains(raw, "hunter2") || strings.Contains(raw, "org-level-token-777") {
			t.Fatal("a secret value is in the session's events")
		}
	})

	t.Run("POST /api/commands (MCP run_command) takes the same path", func(t *testing.T) {
		before := len(db1.runs())
		body := map[string]any{"target": "db-1", "command": "./mark via-api && echo ok"}
		r := c.must(202, "POST", "/api/commands", body).JSON()
		id, _ := r["approval_id"].(string)
		if r["status"] != "approval_required" || id == "" || len(db1.runs()) != before {
			t.Fatalf("gated: %v", r)
		}
		// The reason ends its sentence once ("Parsed as: ... ok. Once", not "ok.. Once").
		if out := r["output"].(string); strings.Contains(out, "..") || !strings.Contains(out, "Parsed as: ") {
			t.Fatalf("gated output: %q", out)
		}
		body["approval_id"] = id
		if r := c.must(202, "POST", "/api/commands", body).JSON(); r["approval_id"] != id {
			t.Fatalf("still pending: %v", r)
		}
		c.must(200, "POST", "/api/approvals/"+id+"/approve", map[string]any{})
		r = c.must(200, "POST", "/api/commands", body).JSON()
		if r["status"] != "completed" || !strings.Contains(r["output"].(string), "marked via-api on db-1") {
			t.Fatalf("approved: %v", r)
		}
		// Single use: the same approval does not run it again.
		if r := c.must(200, "POST", "/api/commands", body).JSON(); r["is_error"] != true || len(db1.runs()) != before+1 {
			t.Fatalf("second use: %v (runs %v)", r, db1.runs())
		}
		r = c.must(403, "POST", "/api/commands", map[string]any{"target": "nowhere", "command": "uptime"}).JSON()
		if r["status"] != "refused" || !strings.Contains(r["output"].(string), `no connector "nowhere"`) {
			t.Fatalf("unknown target: %v", r)
		}
		r = c.must(200, "POST", "/api/commands", map[string]any{"target": "web-1", "command": "uname -a"}).JSON()
		if r["status"] != "refused" || !strings.Contains(r["output"].(string), "refused by the host web-1") {
			t.Fatalf("host refusal: %v", r)
		}
	})

	t.Run("revoke drops the live connection within a second", func(t *testing.T) {
		_, id2 := "", ""
		for _, it := range c.must(200, "GET", "/api/connectors", nil).JSON()["items"].([]any) {
			if m := it.(map[string]any); m["name"] == "db-2" {
				id2 = m["id"].(string)
			}
		}
		start := time.Now()
		got := c.must(200, "POST", "/api/connectors/"+id2+"/revoke", nil).JSON()
		if got["status"] != "revoked" {
			t.Fatalf("revoke: %v", got)
		}
		select {
		case <-db2.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("the revoked connector still runs:\n%s", db2.logs.String())
		}
		if took := time.Since(start); took > 2*time.Second || !strings.Contains(db2.logs.String(), "refused this connector's token") {
			t.Fatalf("revoked after %s:\n%s", took, db2.logs.String())
		}
		if got := c.must(200, "GET", "/api/connectors/"+id2, nil).JSON(); got["connected_at"] != nil {
			t.Fatalf("a revoked connector is still connected: %v", got)
		}
	})

	t.Run("a token of project A cannot serve project B", func(t *testing.T) {
		b := *c
		b.Project = c.must(201, "POST", "/api/projects", map[string]any{"name": "staging"}).JSON()["id"].(string)
		before := len(db1.runs())
		_, evs := w.runCommand(&b, map[string]any{"target": "db-1", "command": "./mark cross-project"})
		if out, res := toolResult(t, evs); res["blocked"] != true || !strings.Contains(out, `no connector "db-1"`) {
			t.Fatalf("project B reached project A's connector: %v", res)
		}
		if len(db1.runs()) != before {
			t.Fatal("project A's host ran project B's command")
		}
		b.must(404, "GET", "/api/connectors/"+id1, nil)
		if l := b.must(200, "GET", "/api/connectors", nil).JSON(); l["total"] != 0.0 {
			t.Fatalf("project B lists A's connectors: %v", l)
		}
		// The connector token opens no REST route.
		tc := *c
		tc.Token = tok1
		tc.must(401, "GET", "/api/connectors", nil)
	})
}

// watch follows a session's events after lastID until done.
func (w *connWorld) watch(c *client, sid string, lastID int64) []sseEvent {
	w.t.Helper()
	res, evs := c.stream("GET", "/api/sessions/"+sid+"/events", nil, lastID, func(ev sseEvent) bool { return ev.Type == "done" })
	if res.StatusCode != 200 || len(evs) == 0 {
		w.t.Fatalf("events: %d %v", res.StatusCode, types(evs))
	}
	return evs
}
