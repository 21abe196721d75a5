package runner_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/agent/llm/llmfake"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// These tests drive the runner alone: a real store in a temp dir, the fake
// LLM speaking the OpenAI wire format on loopback, and a policy of the
// test's own (the server's policy layer has tests of its own).

type env struct {
	db               *store.DB
	org, project, by string
	fake             *llmfake.Server
	r                *runner.Runner
}

func newEnv(t *testing.T, pol runner.Policy, turns ...llmfake.Turn) *env {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "opsagent.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	e := &env{db: db, fake: llmfake.New(t, turns...)}
	u := &store.User{Email: "ada@example.com", Name: "Ada"}
	o, err := db.CreateAccount(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	p := &store.Project{OrgID: o.ID, Name: "payments", Description: "the payments API"}
	if err := db.CreateProject(ctx, p); err != nil {
		t.Fatal(err)
	}
	e.org, e.project, e.by = o.ID, p.ID, u.ID
	e.r = runner.New(runner.Deps{DB: db, LLM: e.fake.Config(llm.ProviderOpenAI), Policy: pol})
	t.Cleanup(e.r.Stop)
	return e
}

// start creates a chat session and launches its first turn.
func (e *env) start(t *testing.T, prompt string) runner.RunInfo {
	t.Helper()
	sess := &store.AgentSession{OrgID: e.org, ProjectID: e.project, Title: runner.TitleFrom(prompt), FirstPrompt: prompt,
		AgentType: "general", Source: store.SourceWebchat, TriggerSource: store.TriggerWeb, CreatedBy: e.by}
	if err := e.db.StartChatSession(context.Background(), sess); err != nil {
		t.Fatal(err)
	}
	info := runner.RunInfo{OrgID: e.org, ProjectID: e.project, SessionID: sess.ID, UserID: e.by,
		Source: store.SourceWebchat, TriggerSource: store.TriggerWeb}
	if err := e.r.Launch(info, prompt, "general"); err != nil {
		t.Fatal(err)
	}
	return info
}

// follow reads a session's events after seq until the stream ends.
func follow(t *testing.T, r *runner.Runner, sessionID string, after int64) []runner.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	sub := r.Subscribe(sessionID, after)
	var out []runner.Event
	for {
		evs, more, err := sub.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, evs...)
		if more != nil {
			select {
			case <-more:
			case <-ctx.Done():
				t.Fatal("the stream did not end")
			}
		}
	}
}

func types(evs []runner.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.Type)
	}
	return out
}

func last(t *testing.T, evs []runner.Event, typ string, into any) {
	t.Helper()
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Type == typ {
			if err := json.Unmarshal(evs[i].Data, into); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no %s event in %v", typ, types(evs))
}

// A turn streams session ... done, numbered from 1 without gaps; the
// outcome is saved before done is seen, and a later viewer replays the
// same events from the store.
func TestRunnerLaunchStreamsAndSavesATurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, llmfake.Text("All green."))
	info := e.start(t, "is the payments API healthy?")
	evs := follow(t, e.r, info.SessionID, 0)
	if len(evs) < 3 || evs[0].Type != runner.EventSession || evs[len(evs)-1].Type != string(agent.EventDone) {
		t.Fatalf("events %v, want session first and done last", types(evs))
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			t.Fatalf("event %d has seq %d", i, ev.Seq)
		}
	}
	var done runner.Done
	last(t, evs, string(agent.EventDone), &done)
	if done.Status != store.SessionCompleted || done.AgentStatus != string(agent.StatusCompleted) {
		t.Fatalf("done %+v", done)
	}
	sess, err := e.db.FindProjectSession(context.Background(), e.org, e.project, info.SessionID)
	if err != nil || sess.Status != store.SessionCompleted || sess.Summary != "All green." {
		t.Fatalf("session %+v (%v), want completed with the answer as summary", sess, err)
	}
	// The system prompt names the project and its description.
	if reqs := e.fake.Requests(); len(reqs) != 1 || !strings.Contains(reqs[0].Text(), "payments API") {
		t.Fatalf("the model was not told the project: %d requests", len(reqs))
	}
	// Nothing live any more: a new viewer reads the stored events and stops.
	waitIdle(t, e.r, info.SessionID)
	again := follow(t, e.r, info.SessionID, 2)
	if len(again) != len(evs)-2 || again[0].Seq != 3 {
		t.Fatalf("replay after 2: %v", types(again))
	}
}

// Continue runs the next turn with the transcript as history; a second
// Launch for a live session is refused with ErrBusy.
func TestRunnerContinueAndBusy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, llmfake.Text("first").After(300*time.Millisecond), llmfake.Text("second"))
	info := e.start(t, "one")
	if err := e.r.Launch(info, "again", "general"); !errors.Is(err, runner.ErrBusy) {
		t.Fatalf("second Launch = %v, want ErrBusy", err)
	}
	follow(t, e.r, info.SessionID, 0)
	turn, err := e.r.Continue(context.Background(), info, "two", "")
	if err != nil {
		t.Fatal(err)
	}
	evs := follow(t, e.r, info.SessionID, turn.FirstSeq-1)
	var started runner.SessionStarted
	last(t, evs, runner.EventSession, &started)
	if started.Turn != 2 || started.FirstEventID != turn.FirstSeq {
		t.Fatalf("second turn started %+v, want turn 2 from %d", started, turn.FirstSeq)
	}
	reqs := e.fake.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].Text(), "first") || !strings.Contains(reqs[1].Text(), "two") {
		t.Fatalf("the second turn did not carry the history")
	}
}

// Cancel ends a live turn with the canceller's name in the reason.
func TestRunnerCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil, llmfake.Hang())
	info := e.start(t, "hang")
	deadline := time.Now().Add(30 * time.Second)
	for !e.r.Live(info.SessionID) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !e.r.Cancel(context.Background(), info.SessionID, "ada@example.com") {
		t.Fatal("Cancel found no live turn")
	}
	var done runner.Done
	last(t, follow(t, e.r, info.SessionID, 0), string(agent.EventDone), &done)
	if done.Status != store.SessionCancelled || done.Reason != "cancelled by ada@example.com" {
		t.Fatalf("done %+v", done)
	}
	if e.r.Cancel(context.Background(), info.SessionID, "x") {
		t.Fatal("Cancel of an ended turn reported a live one")
	}
}

// recordingPolicy asks for approval of every call and records the approvals.
type recordingPolicy struct {
	mu        sync.Mutex
	approvals []string
	tool      agent.Tool
}

func (p *recordingPolicy) Tools(context.Context, runner.RunInfo) []agent.Tool {
	return []agent.Tool{p.tool}
}
func (p *recordingPolicy) Gate(context.Context, runner.RunInfo) agent.Gate {
	return agent.GateFunc(func(context.Context, agent.Call) agent.Decision {
		return agent.Decision{Verdict: agent.VerdictNeedApproval, Reason: "a person decides"}
	})
}
func (p *recordingPolicy) Budget(context.Context, runner.RunInfo) agent.Budget { return nil }
func (p *recordingPolicy) Obligations(context.Context, runner.RunInfo) string {
	return "Never restart the database."
}
func (p *recordingPolicy) ApprovalNeeded(_ context.Context, _ runner.RunInfo, pend *agent.Pending) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.approvals = append(p.approvals, pend.Call.Name)
	return "approval-1", nil
}

// A turn that stops for approval publishes approval.required with the
// policy's approval id and waits; Resume with the decision runs the call
// and completes the session.
func TestRunnerWaitsForApprovalAndResumes(t *testing.T) {
	t.Parallel()
	ran := make(chan string, 1)
	tool := agent.FuncTool{Definition: llm.ToolSpec{Name: "restart", Description: "restart a service",
		Parameters: json.RawMessage(`{"type":"object","properties":{"service":{"type":"string"}}}`)},
		Fn: func(_ context.Context, args json.RawMessage) (string, error) {
			ran <- string(args)
			return "restarted", nil
		}}
	pol := &recordingPolicy{tool: tool}
	e := newEnv(t, pol, llmfake.ToolCall("restart", `{"service":"api"}`), llmfake.Text("Restarted the api."))
	info := e.start(t, "restart the api")
	evs := follow(t, e.r, info.SessionID, 0)
	var req runner.ApprovalRequired
	last(t, evs, string(agent.EventApprovalRequired), &req)
	var done runner.Done
	last(t, evs, string(agent.EventDone), &done)
	if req.ApprovalID != "approval-1" || req.Name != "restart" || !done.WaitingApproval {
		t.Fatalf("approval.required %+v, done %+v", req, done)
	}
	if !strings.Contains(e.fake.Requests()[0].Text(), "Never restart the database.") {
		t.Fatal("the obligations were not in the system prompt")
	}
	if err := e.r.Resume(context.Background(), info, agent.Approval{CallID: req.CallID, Approved: true}); err != nil {
		t.Fatal(err)
	}
	select {
	case args := <-ran:
		if args != `{"service":"api"}` {
			t.Fatalf("the tool ran with %s", args)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the approved call did not run")
	}
	last(t, follow(t, e.r, info.SessionID, 0), string(agent.EventDone), &done)
	if done.Status != store.SessionCompleted {
		t.Fatalf("after the decision: %+v", done)
	}
	// A second decision for the same call finds nothing waiting.
	waitIdle(t, e.r, info.SessionID)
	err := e.r.Resume(context.Background(), info, agent.Approval{CallID: req.CallID, Approved: true})
	var se *store.Error
	if !errors.As(err, &se) || se.Code != store.EConflict {
		t.Fatalf("second Resume = %v, want a conflict", err)
	}
}

// Without any LLM configured the turn fails with an error event naming
// the settings, and the session is saved failed.
func TestRunnerWithoutLLMFailsTheTurn(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	e.r = runner.New(runner.Deps{DB: e.db})
	t.Cleanup(e.r.Stop)
	info := e.start(t, "hello")
	evs := follow(t, e.r, info.SessionID, 0)
	var errEv agent.ErrorEvent
	last(t, evs, string(agent.EventError), &errEv)
	var done runner.Done
	last(t, evs, string(agent.EventDone), &done)
	if errEv.Code != "llm_config" || done.Status != store.SessionFailed {
		t.Fatalf("error %+v, done %+v", errEv, done)
	}
}

func waitIdle(t *testing.T, r *runner.Runner, sessionID string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for r.Live(sessionID) {
		if time.Now().After(deadline) {
			t.Fatal("the turn stayed live")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
