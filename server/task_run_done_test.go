package server_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
)

// A client that follows a task run and reads the session as soon as the
// stream says done sees the run's final status: the runner publishes done
// only after the scheduler saved it (runner/task.go taskOutcome). Looped,
// because before, the read raced the save and lost only now and then. The
// events persisted for replay are the ones streamed live, done last.
func TestTaskRunDoneAfterStatusSaved(t *testing.T) {
	fake := llmfake.New(t, llmfake.Always(llmfake.Text("the disk is fine").WithUsage(10, 5).After(50*time.Millisecond)))
	env := newEnv(t, withLLM(fake))
	c := env.register("follow@example.com")
	withProject(t, env, c)
	id := createTask(t, c, map[string]any{"name": "adhoc", "prompt": "check the disk"})["id"].(string)
	for i := range 40 {
		sid := c.must(202, "POST", "/api/tasks/"+id+"/trigger", nil).JSON()["session_id"].(string)
		// Follow it as a client does: the stream of a run not yet live ends
		// at once with what was stored (nothing, or its session event); the
		// model answers after 50 ms, so most runs are followed live.
		var live []sseEvent
		for deadline := time.Now().Add(30 * time.Second); !slices.Contains(types(live), "done"); time.Sleep(2 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("run %d: its stream stayed empty", i)
			}
			res, evs := c.stream("GET", "/api/sessions/"+sid+"/events", nil, 0, func(e sseEvent) bool { return e.Type == "done" })
			if res.StatusCode != 200 {
				t.Fatalf("run %d: events %d", i, res.StatusCode)
			}
			live = evs
		}
		done := lastOf(t, live, "done")
		if done.Data["status"] != "completed" {
			t.Fatalf("run %d: done %v", i, done.Data)
		}
		if got := c.must(200, "GET", "/api/sessions/detail/"+sid, nil).JSON()["status"]; got != "completed" {
			t.Fatalf("run %d: the session read right after done is %v, want completed", i, got)
		}
		if i%10 == 0 {
			// Replay (Last-Event-ID) gives the same events, done last.
			_, replay := c.stream("GET", "/api/sessions/"+sid+"/events", nil, live[0].ID-1, nil)
			if !slices.Equal(eventIDs(replay), eventIDs(live)) || !slices.Equal(types(replay), types(live)) {
				t.Fatalf("run %d: replay %v %v, live %v %v", i, eventIDs(replay), types(replay), eventIDs(live), types(live))
			}
			_, rest := c.stream("GET", "/api/sessions/"+sid+"/events", nil, done.ID-1, nil)
			if fmt.Sprint(types(rest)) != "[done]" {
				t.Fatalf("run %d: from before done: %v", i, types(rest))
			}
		}
	}
}

func eventIDs(evs []sseEvent) []int64 {
	out := make([]int64, len(evs))
	for i, e := range evs {
		out[i] = e.ID
	}
	return out
}
