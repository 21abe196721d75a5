package server_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/store"
)

// Past the replay cap a what-if replays the newest calls, the ones the
// proposed rules would meet first, and says which span of time it covered.
func TestRulesPreviewReplaysTheNewestCalls(t *testing.T) {
	e := newE2E(t, llmfake.ToolCall("run_command", `{"command":"echo hello","target":"server"}`), llmfake.Text("said hello"))
	c := e.c
	sid, _ := e.chat(t, "say hello")
	org := orgOf(t, c)
	var seed store.RecordedCall
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		calls, _, err := e.env.DB.FindRecordedCalls(context.Background(), org, c.Project, time.Now().Add(-time.Hour), 10)
		if err == nil && len(calls) == 1 {
			seed = calls[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("recorded calls: %d, %v", len(calls), err)
		}
	}
	// The oldest call, two hours ago, would be newly blocked; 5,000 newer
	// ones after it are not. Seqs far above the run's own.
	now := time.Now()
	old := now.Add(-2 * time.Hour).UTC().Truncate(time.Millisecond)
	evs := []store.SessionEvent{{Seq: 1_000_000, Type: "tool.call", Data: strings.Replace(seed.Data, "echo hello", "echo restart", 1), CreatedAt: old}}
	firstNewer := now.Add(-time.Hour).UTC().Truncate(time.Millisecond)
	for i := range 5000 {
		evs = append(evs, store.SessionEvent{Seq: int64(1_000_001 + i), Type: "tool.call", Data: strings.Replace(seed.Data, "echo hello", "echo hi", 1),
			CreatedAt: firstNewer.Add(time.Duration(i) * time.Millisecond)})
	}
	if err := e.env.DB.AppendSessionEvents(context.Background(), sid, evs); err != nil {
		t.Fatal(err)
	}
	p := c.must(200, "POST", "/api/rules/preview", map[string]any{"days": 1, "add": []map[string]any{{"kind": "must_never",
		"description": "never restart", "tool": "run_command", "match_type": "glob", "pattern": "*restart*"}}}).JSON()
	if p["calls_replayed"] != float64(5000) || p["truncated"] != true {
		t.Fatalf("replayed %v (truncated %v), want the cap of 5000, truncated", p["calls_replayed"], p["truncated"])
	}
	if p["newly_blocked"] != float64(0) || p["unchanged"] != float64(5000) {
		t.Fatalf("the oldest call was replayed instead of the newest: %v blocked, %v unchanged", p["newly_blocked"], p["unchanged"])
	}
	// The answer names the window: from the second newer call (the first
	// fell off with the oldest) to the chat's own call.
	from, _ := time.Parse(time.RFC3339Nano, jsonString(p["replayed_from"]))
	to, _ := time.Parse(time.RFC3339Nano, jsonString(p["replayed_to"]))
	if want := firstNewer.Add(time.Millisecond); !from.Equal(want) {
		t.Errorf("replayed_from %v, want %v (the oldest call replayed)", p["replayed_from"], want)
	}
	if !to.Equal(seed.At) {
		t.Errorf("replayed_to %v, want %v (the newest call)", p["replayed_to"], seed.At)
	}
	since, _ := time.Parse(time.RFC3339Nano, jsonString(p["since"]))
	if d := now.Add(-24 * time.Hour).Sub(since); d < -time.Minute || d > time.Minute {
		t.Errorf("since %v, want about a day ago", p["since"])
	}
}

func jsonString(v any) string { s, _ := v.(string); return s }
