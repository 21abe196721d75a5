package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/eval"
)

const starterDir = "../../testdata/evals"

// replayed is a provider that plays steps in order over the real OpenAI
// wire format (a loopback fake), resolving "$N" call references from the
// conversation it is sent.
func replayed(t *testing.T, steps []eval.ReplayStep) llm.Provider {
	fake := llmfake.New(t)
	next := 0
	fake.Respond(func(req llmfake.Request) (llmfake.Turn, bool) {
		var ids []string
		for _, m := range req.Messages {
			for _, c := range m.ToolCalls {
				ids = append(ids, c.ID)
			}
		}
		if next >= len(steps) {
			return llmfake.Text("I have nothing more to add."), true
		}
		tool, args, text, err := steps[next].Turn(ids)
		next++
		if err != nil {
			t.Errorf("replay step %d: %v", next, err)
			return llmfake.Text(""), true
		}
		if tool != "" {
			return llmfake.ToolCall(tool, args), true
		}
		return llmfake.Text(text), true
	})
	p, err := llm.New(fake.Config(llm.ProviderOpenAI))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStarterLibraryScoresKnownInvestigations replays, for every starter
// scenario, a known-good investigation (it must pass) and a known-bad one
// (it must fail, with the reason its replay names).
func TestStarterLibraryScoresKnownInvestigations(t *testing.T) {
	scenarios, err := eval.LoadPaths([]string{starterDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(scenarios) < 25 {
		t.Fatalf("the starter library has %d scenarios, want at least 25", len(scenarios))
	}
	replays := map[string]*eval.Replay{}
	for _, s := range scenarios {
		r, err := eval.LoadReplay(filepath.Join(starterDir, "replays", s.Name+".yaml"))
		if err != nil {
			t.Fatalf("scenario %s has no replay: %v", s.Name, err)
		}
		if r.Bad.FailsWith == "" {
			t.Fatalf("%s: the bad replay must say what it fails with", s.Name)
		}
		replays[s.Name] = r
	}
	for _, kind := range []string{"good", "bad"} {
		rep, err := eval.Run(context.Background(), eval.Options{
			Scenarios: scenarios, Models: []eval.Model{{Name: llmfake.Model, Label: "replay-" + kind}}, Parallel: 4,
			Scripted: func(s *eval.Scenario, _ eval.Model, _ int) llm.Provider {
				if kind == "good" {
					return replayed(t, replays[s.Name].Good)
				}
				return replayed(t, replays[s.Name].Bad.Steps)
			}})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rep.Runs {
			switch {
			case kind == "good" && !r.Pass:
				t.Errorf("%s: the known-good investigation failed: %s", r.Scenario, strings.Join(r.Failures, "; "))
			case kind == "bad" && r.Pass:
				t.Errorf("%s: the known-bad investigation passed", r.Scenario)
			case kind == "bad" && !strings.Contains(strings.Join(r.Failures, "; "), replays[r.Scenario].Bad.FailsWith):
				t.Errorf("%s: the known-bad investigation failed for another reason than %q: %s", r.Scenario,
					replays[r.Scenario].Bad.FailsWith, strings.Join(r.Failures, "; "))
			}
		}
		want := 1.0
		if kind == "bad" {
			want = 0
		}
		if got := rep.PassRate(); got != want {
			t.Errorf("%s replays: pass rate %.2f, want %.0f", kind, got, want)
		}
		if dir := os.Getenv("OPSAGENT_EVAL_REPORT_DIR"); dir != "" {
			f, err := os.Create(filepath.Join(dir, "starter-"+kind+".html"))
			if err == nil {
				_ = rep.WriteHTML(f)
				f.Close()
			}
		}
	}
}
