package server_test

import (
	"testing"
	"time"
)

// An Alertmanager group correlates into the same incidents whether its
// incident's key is in memory (the SQLite store keeps open incidents'
// main keys there) or read back after a restart: it joins within the
// window, across a restart, after an acknowledgement; after the window,
// or once resolved, the next notification opens a new incident.
func TestIncidentCorrelationAcrossRestart(t *testing.T) {
	env := newEnv(t, openSignup)
	env.UseClock()
	human := env.register("owner@example.com")
	project := env.newProject(human, "prod")
	// An API key: the clock moves past the access token's life.
	owner, _ := env.apiKey(t, human, map[string]any{"name": "ops", "scopes": []string{"*"}})
	owner.Project = project
	f := newHook(t, env, owner, map[string]any{"provider": "alertmanager", "dedupe_window_seconds": 0})
	n := 0
	// notify sends one notification of group g (a new alert each time)
	// and returns the incidents, newest first, with their event counts.
	notify := func(g string) ([]string, []float64) {
		t.Helper()
		n++
		if res := f.post(t, amGroup(g, n, n+1), bearer(f.secret)); res.Status != 202 {
			t.Fatalf("notification %d: %d %s", n, res.Status, res.Body)
		}
		f.dispatch(t)
		var page struct {
			Items []map[string]any `json:"items"`
		}
		owner.must(200, "GET", "/api/incidents", nil).decode(t, &page)
		var ids []string
		var events []float64
		for _, it := range page.Items {
			ids = append(ids, it["id"].(string))
			events = append(events, it["event_count"].(float64))
		}
		return ids, events
	}
	want := func(what string, ids []string, events []float64, n int, first float64) {
		t.Helper()
		if len(ids) != n || events[0] != first {
			t.Fatalf("%s: %d incidents, the first with %v events; want %d and %v", what, len(ids), events, n, first)
		}
	}
	ids, ev := notify("g1")
	want("first", ids, ev, 1, 1)
	a := ids[0]
	ids, ev = notify("g1")
	want("within the window", ids, ev, 1, 2)

	env = restartLater(env, owner, 10*time.Minute)
	f.env = env
	ids, ev = notify("g1")
	want("after a restart", ids, ev, 1, 3)
	owner.must(200, "POST", "/api/incidents/"+a+"/acknowledge", nil)
	ids, ev = notify("g1")
	want("acknowledged", ids, ev, 1, 4)

	env.Advance(61 * time.Minute) // the default window is an hour
	ids, ev = notify("g1")
	want("after the window", ids, ev, 2, 1)
	b := ids[0]
	ids, ev = notify("g1")
	want("the new incident", ids, ev, 2, 2)
	if ids[0] != b {
		t.Fatalf("joined %s, want %s", ids[0], b)
	}

	owner.must(200, "POST", "/api/incidents/"+b+"/resolve", map[string]any{"summary": "fixed"})
	// The new server's clock starts from real time: past the 71 minutes
	// this one moved, so a's last alert is out of the window too.
	env = restartLater(env, owner, 73*time.Minute)
	f.env = env
	ids, _ = notify("g1")
	if len(ids) != 3 || ids[0] == a || ids[0] == b {
		t.Fatalf("after the resolve: %v, want a third incident", ids)
	}
}
