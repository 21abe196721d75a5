package server_test

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/store"
)

// Isolation of heartbeat checks, maintenance windows, shadow rules, rule
// previews and postmortems: their sweep probes (added to isolationProbes)
// and a dedicated probe with the other tenant's real ids of each kind.

func init() {
	for name, p := range beyondProbes {
		isolationProbes[name] = p
	}
}

// beyondProbes use the other tenant's project and incident; ids of the new
// kinds are probed for real in TestIsolationBeyond (the sweep's ids have
// no field for them, so the sweep tries a foreign id of another kind).
var beyondProbes = map[string]probe{
	"GET /api/heartbeats": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/heartbeats", nil) },
	"POST /api/heartbeats": func(o own, x ids) []probeReq {
		return append(inProject(x, "POST", "/api/heartbeats", map[string]any{"name": "x", "period_seconds": 3600, "grace_seconds": 60}),
			probeReq{method: "POST", path: "/api/heartbeats", project: o.project, body: map[string]any{"name": "x", "period_seconds": 3600, "grace_seconds": 60, "task_id": x.task}})
	},
	"GET /api/heartbeats/{check_id}": func(o own, x ids) []probeReq { return projectAndForeign(o, x, "GET", "/api/heartbeats/"+x.rule, nil) },
	"PATCH /api/heartbeats/{check_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "PATCH", "/api/heartbeats/"+x.rule, map[string]any{"name": "p"})
	},
	"DELETE /api/heartbeats/{check_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "DELETE", "/api/heartbeats/"+x.rule, nil)
	},
	// Unauthenticated: the secret (or the public badge token) is the credential; no tenant id is taken.
	"POST /api/ping/{ping_secret}":            nil,
	"GET /api/ping/{ping_secret}":             nil,
	"POST /api/ping/{ping_secret}/start":      nil,
	"GET /api/ping/{ping_secret}/start":       nil,
	"POST /api/ping/{ping_secret}/fail":       nil,
	"GET /api/ping/{ping_secret}/fail":        nil,
	"GET /api/heartbeat-badges/{badge_token}": nil,
	"GET /api/maintenance-windows":            func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/maintenance-windows", nil) },
	"POST /api/maintenance-windows":           func(o own, x ids) []probeReq { return inProject(x, "POST", "/api/maintenance-windows", windowBody()) },
	"GET /api/maintenance-windows/{window_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/maintenance-windows/"+x.rule, nil)
	},
	"PUT /api/maintenance-windows/{window_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "PUT", "/api/maintenance-windows/"+x.rule, windowBody())
	},
	"DELETE /api/maintenance-windows/{window_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "DELETE", "/api/maintenance-windows/"+x.rule, nil)
	},
	"POST /api/rules/preview": func(o own, x ids) []probeReq {
		return append(inProject(x, "POST", "/api/rules/preview", map[string]any{}),
			probeReq{method: "POST", path: "/api/rules/preview", project: o.project, body: map[string]any{"remove": []string{x.rule}}})
	},
	"GET /api/rules/shadow": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/rules/shadow", nil) },
	"POST /api/rules/shadow": func(o own, x ids) []probeReq {
		return inProject(x, "POST", "/api/rules/shadow", map[string]any{"kind": "must_never", "description": "d", "tool": "run_command"})
	},
	"GET /api/rules/shadow/{rule_id}": func(o own, x ids) []probeReq { return projectAndForeign(o, x, "GET", "/api/rules/shadow/"+x.rule, nil) },
	"DELETE /api/rules/shadow/{rule_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "DELETE", "/api/rules/shadow/"+x.rule, nil)
	},
	"POST /api/rules/shadow/{rule_id}/promote": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/rules/shadow/"+x.rule+"/promote", nil)
	},
	"GET /api/postmortems": func(o own, x ids) []probeReq { return inProject(x, "GET", "/api/postmortems", nil) },
	"GET /api/postmortems/{incident_id}": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "GET", "/api/postmortems/"+x.incident, nil)
	},
	"POST /api/postmortems/{incident_id}/draft": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/postmortems/"+x.incident+"/draft", nil)
	},
	"POST /api/postmortems/{incident_id}/publish": func(o own, x ids) []probeReq {
		return projectAndForeign(o, x, "POST", "/api/postmortems/"+x.incident+"/publish", nil)
	},
}

func windowBody() map[string]any {
	now := time.Now().UTC()
	return map[string]any{"name": "w", "starts_at": now, "ends_at": now.Add(time.Hour)}
}

// TestIsolationBeyond tries bravo's real check, window, shadow rule and
// postmortem from every alpha caller: each answers exactly as a random id
// does, and bravo's things are unchanged.
func TestIsolationBeyond(t *testing.T) {
	env := newEnv(t, openSignup)
	a := env.newTenant(t, "alpha")
	b := env.newTenant(t, "bravo")
	bo := b.owner
	bo.Project = b.project
	check := bo.must(201, "POST", "/api/heartbeats", map[string]any{"name": "bravo backup", "period_seconds": 3600, "grace_seconds": 60}).JSON()
	now := time.Now().UTC()
	win := bo.must(201, "POST", "/api/maintenance-windows", map[string]any{"name": "bravo window", "starts_at": now, "ends_at": now.Add(time.Hour),
		"match_sources": []string{"grafana"}}).JSON()
	shadow := bo.must(201, "POST", "/api/rules/shadow", map[string]any{"kind": "must_never", "description": "bravo shadow", "tool": "run_command", "match_type": "glob", "pattern": "rm *"}).JSON()
	hook := bravoWebhook(t, env, bo, bo.must(201, "POST", "/api/tasks", map[string]any{"name": "t", "prompt": "p"}).JSON()["id"].(string))
	bo.must(200, "POST", "/api/incidents/"+hook.incident+"/resolve", map[string]any{"summary": "bravo fixed it"})
	pollUntil(t, "bravo's draft", func() map[string]any { return bo.do("GET", "/api/postmortems/"+hook.incident, nil).JSON() },
		func(m map[string]any) bool { return m["status"] == "draft" })

	type route struct {
		method, path string
		body         any
	}
	routes := func(checkID, windowID, shadowID, incidentID string) []route {
		return []route{
			{"GET", "/api/heartbeats/" + checkID, nil}, {"PATCH", "/api/heartbeats/" + checkID, map[string]any{"name": "pwned"}},
			{"DELETE", "/api/heartbeats/" + checkID, nil},
			{"GET", "/api/maintenance-windows/" + windowID, nil}, {"PUT", "/api/maintenance-windows/" + windowID, windowBody()},
			{"DELETE", "/api/maintenance-windows/" + windowID, nil},
			{"GET", "/api/rules/shadow/" + shadowID, nil}, {"POST", "/api/rules/shadow/" + shadowID + "/promote", nil},
			{"DELETE", "/api/rules/shadow/" + shadowID, nil},
			{"GET", "/api/postmortems/" + incidentID, nil}, {"POST", "/api/postmortems/" + incidentID + "/draft", nil},
			{"POST", "/api/postmortems/" + incidentID + "/publish", nil},
		}
	}
	realIDs := []string{check["id"].(string), win["id"].(string), shadow["id"].(string), hook.incident}
	callers := map[string]*client{}
	for role, c := range a.byRole {
		callers[role] = c
	}
	callers["key:*"], _ = env.apiKey(t, a.owner, map[string]any{"name": "all", "scopes": []string{"*"}})
	for who, c := range callers {
		for _, project := range []string{a.project, b.project} {
			c.Project = project
			rnd := []string{store.NewID(), store.NewID(), store.NewID(), store.NewID()}
			real, ctrl := routes(realIDs[0], realIDs[1], realIDs[2], realIDs[3]), routes(rnd[0], rnd[1], rnd[2], rnd[3])
			for i := range real {
				got, want := c.do(real[i].method, real[i].path, real[i].body), c.do(ctrl[i].method, ctrl[i].path, ctrl[i].body)
				gb, wb := got.Body, want.Body
				for j := range realIDs {
					gb, wb = bytes.ReplaceAll(gb, []byte(realIDs[j]), []byte("<id>")), bytes.ReplaceAll(wb, []byte(rnd[j]), []byte("<id>"))
				}
				if got.Status != want.Status || !bytes.Equal(gb, wb) || got.Status < 300 {
					t.Errorf("LEAK as %s in %s: %s %s answered %d %s; a random id answers %d %s", who, project[:8], real[i].method, real[i].path,
						got.Status, got.Body, want.Status, want.Body)
				}
			}
			// Lists in one's own project show nothing of bravo's.
			if project == a.project {
				for _, p := range []string{"/api/heartbeats", "/api/maintenance-windows", "/api/rules/shadow", "/api/postmortems"} {
					if r := c.do("GET", p, nil); strings.Contains(string(r.Body), "bravo") || strings.Contains(string(r.Body), hook.incident) {
						t.Errorf("LEAK as %s: %s lists bravo's: %s", who, p, r.Body)
					}
				}
			}
		}
	}
	// Bravo's things are untouched.
	if got := bo.must(200, "GET", "/api/heartbeats/"+realIDs[0], nil).JSON(); got["name"] != "bravo backup" {
		t.Fatalf("bravo check: %v", got)
	}
	bo.must(200, "GET", "/api/maintenance-windows/"+realIDs[1], nil)
	bo.must(200, "GET", "/api/rules/shadow/"+realIDs[2], nil)
	if got := bo.must(200, "GET", "/api/postmortems/"+hook.incident, nil).JSON(); got["status"] != "draft" {
		t.Fatalf("bravo postmortem: %v", got)
	}
}
