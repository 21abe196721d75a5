package cli_test

import (
	"strings"
	"testing"
	"time"
)

// heartbeats and maintenance: create, list (table, --json, -q), delete,
// against the real server of the current project; bad input is a usage
// error (exit 2) or the server's validation (exit 2 too), never a trace.
func TestHeartbeatsAndMaintenanceWindows(t *testing.T) {
	s := startServer(t)
	u := s.newUser("ops@example.com")
	env := s.cliEnv(t.TempDir(), u.key)

	hb := decode[map[string]any](t, ok(t, env, "heartbeats", "create", "--json", "--name", "nightly backup",
		"--schedule", "0 3 * * *", "--timezone", "Europe/Paris", "--grace", "30m").stdout)
	id, _ := hb["id"].(string)
	if id == "" || !strings.Contains(hb["ping_url"].(string), "/") || hb["grace_seconds"] != 1800.0 || hb["secret"] == "" {
		t.Fatalf("heartbeats create: %v", hb)
	}
	people := ok(t, env, "heartbeats", "create", "--name", "queue drain", "--period", "1h")
	if !strings.Contains(people.stdout, "ping url") || !strings.Contains(people.stdout, "every 1h") {
		t.Fatalf("heartbeats create for people:\n%s", people.stdout)
	}
	list := ok(t, env, "heartbeats", "list").stdout
	if !strings.Contains(list, "nightly backup") || !strings.Contains(list, "0 3 * * * (Europe/Paris)") || !strings.Contains(list, "queue drain") {
		t.Fatalf("heartbeats list:\n%s", list)
	}
	api := s.must(200, "GET", "/api/heartbeats", u.token, u.project, nil)
	if api["total"] != 2.0 {
		t.Fatalf("the API lists %v", api)
	}
	if out := ok(t, env, "heartbeats", "delete", id).stdout; !strings.Contains(out, "Deleted heartbeat check "+id) {
		t.Fatalf("heartbeats delete: %s", out)
	}
	if q := strings.Fields(ok(t, env, "heartbeats", "list", "-q").stdout); len(q) != 1 || q[0] == id {
		t.Fatalf("heartbeats list -q after the delete: %v", q)
	}
	exits(t, 3, "", env, "heartbeats", "delete", id)
	exits(t, 2, "either --schedule (cron) or --period", env, "heartbeats", "create", "--name", "x")
	exits(t, 2, "body.grace_seconds", env, "heartbeats", "create", "--name", "x", "--period", "1h", "--grace", "10s")

	start := time.Now().UTC().Add(-time.Minute).Truncate(time.Second)
	w := decode[map[string]any](t, ok(t, env, "maintenance", "create", "--json", "--name", "db upgrade",
		"--starts", start.Format(time.RFC3339), "--ends", start.Add(2*time.Hour).Format(time.RFC3339),
		"--source", "alertmanager", "--label", "service=db*").stdout)
	wid, _ := w["id"].(string)
	if wid == "" || w["active"] != true || w["mode"] != "suppress" || w["match_labels"].(map[string]any)["service"] != "db*" {
		t.Fatalf("maintenance create: %v", w)
	}
	ok(t, env, "maintenance", "create", "--name", "sunday patching", "--schedule", "0 2 * * 0", "--duration", "3h", "--mode", "observe")
	list = ok(t, env, "maintenance", "list").stdout
	if !strings.Contains(list, "db upgrade") || !strings.Contains(list, "active") || !strings.Contains(list, "alertmanager service=db*") ||
		!strings.Contains(list, "0 2 * * 0 for 3h") || !strings.Contains(list, "observe") {
		t.Fatalf("maintenance list:\n%s", list)
	}
	ok(t, env, "maintenance", "delete", wid)
	if api := s.must(200, "GET", "/api/maintenance-windows", u.token, u.project, nil); api["total"] != 1.0 {
		t.Fatalf("after the delete the API lists %v", api)
	}
	exits(t, 2, "--starts must be an RFC 3339 time", env, "maintenance", "create", "--name", "x", "--starts", "tomorrow")
	exits(t, 2, "--label must look like name=glob", env, "maintenance", "create", "--name", "x", "--label", "nolabel")
}
