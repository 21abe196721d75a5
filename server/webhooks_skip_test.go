package server_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// An alert storm on a task whose run is still going (overlap_policy skip)
// records the skip on each event, not a cancelled session per alert; a
// skipped event replayed once the run has ended starts exactly one run.
func TestWebhookOverlapSkipRecordedOnTheEvent(t *testing.T) {
	t.Parallel()
	env := newEnv(t, openSignup, withLLM(llmfake.New(t, llmfake.Always(llmfake.Hang())))) // every run hangs, the replay's too
	owner := env.register("owner@example.com")
	withProject(t, env, owner)
	task := createTask(t, owner, map[string]any{"name": "on alert", "prompt": "investigate", "overlap_policy": "skip"})["id"].(string)
	h := owner.must(200, "PUT", "/api/tasks/"+task+"/webhook", map[string]any{"provider": "alertmanager", "rate_limit_per_minute": 100000}).JSON()
	f := &hookFixture{env: env, owner: owner, task: task, secret: h["secret"].(string), hook: h}

	// The first alert starts a run, which hangs on the model.
	r := f.post(t, amAlert("group-first", "fp-first", "firing"), bearer(f.secret))
	if r.Status != 202 {
		t.Fatalf("first alert: %d %s", r.Status, r.Body)
	}
	f.dispatch(t)
	first := f.event(t, r.JSON()["event_id"].(string))
	sid := ""
	for _, d := range first["dispatch"].([]any) {
		if it := d.(map[string]any); it["kind"] == "run" {
			sid, _ = it["id"].(string)
		}
	}
	if first["status"] != "dispatched" || sid == "" {
		t.Fatalf("first alert started no run: %v", first)
	}
	waitSession(t, owner, sid, func(d map[string]any) bool { return d["status"] == "running" })

	// 50 distinct alerts while it runs: no new session, 50 skipped events.
	var wg sync.WaitGroup
	for i := 0; i < 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if r := f.post(t, amAlert(fmt.Sprintf("group-%02d", i), fmt.Sprintf("fp-%02d", i), "firing"), bearer(f.secret)); r.Status != 202 {
				t.Errorf("alert %d: %d %s", i, r.Status, r.Body)
			}
		}()
	}
	wg.Wait()
	f.dispatch(t)
	if runs, err := env.DB.FindTaskRuns(t.Context(), orgOf(t, owner), task, 1000); err != nil || len(runs) != 1 {
		t.Fatalf("sessions of the task: %d (%v), want only the running one", len(runs), err)
	}
	skipped := f.events(t, "&status=skipped")
	if len(skipped) != 50 {
		t.Fatalf("skipped events: %d, want 50", len(skipped))
	}
	want := "the previous run " + sid + " was still in progress (overlap_policy skip)"
	var incident string
	for _, e := range skipped {
		e = f.event(t, e["id"].(string))
		runs := 0
		for _, d := range e["dispatch"].([]any) {
			switch it := d.(map[string]any); it["kind"] {
			case "run":
				runs++
				if it["status"] != "skipped" || it["reason"] != want || it["id"] != "" && it["id"] != nil {
					t.Fatalf("skipped event's run item: %v", it)
				}
			case "incident":
				incident = it["id"].(string)
			}
		}
		if runs != 1 {
			t.Fatalf("skipped event: %v", e)
		}
	}
	// The alert's incident says the run was skipped, and links the run that blocked it.
	inc := owner.must(200, "GET", "/api/incidents/"+incident, nil).JSON()
	found := false
	for _, e := range inc["timeline"].([]any) {
		it := e.(map[string]any)
		if it["kind"] == "skipped" {
			data, _ := it["data"].(map[string]any)
			found = strings.Contains(it["text"].(string), want) && data["session_id"] == sid
		}
	}
	if !found {
		t.Fatalf("incident timeline has no skip: %v", inc["timeline"])
	}

	// Once the run has ended, a replay of a skipped event starts exactly one run.
	owner.must(200, "POST", "/api/sessions/"+sid+"/cancel", nil)
	waitSession(t, owner, sid, func(d map[string]any) bool { return d["status"] == "cancelled" })
	rep := owner.must(202, "POST", "/api/tasks/"+task+"/webhook/events/"+skipped[0]["id"].(string)+"/replay", nil).JSON()
	items := rep["items"].([]any)
	newID, _ := items[0].(map[string]any)["new_event_id"].(string)
	if newID == "" {
		t.Fatalf("replay: %v", rep)
	}
	f.dispatch(t)
	if e := f.event(t, newID); e["status"] != "dispatched" {
		t.Fatalf("replayed event: %v", e)
	}
	runs, err := env.DB.FindTaskRuns(t.Context(), orgOf(t, owner), task, 1000)
	if err != nil || len(runs) != 2 || runs[0].ID == sid {
		t.Fatalf("after the replay: %d sessions (%v), want the first and one new run", len(runs), err)
	}
}
