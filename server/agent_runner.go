package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/store"
)

// Limits of one turn started from chat or resume (task runs carry their own).
const (
	chatTurnTimeout = 15 * time.Minute
	chatMaxSteps    = agent.DefaultMaxSteps
	// interruptedReason is the reason of a turn cut by a shutdown.
	interruptedReason = "interrupted: the server shut down while this run was in progress"
)

// agentRunner runs agent turns in the background (a run goes on when the
// browser closes), persists their events and transcripts, keeps sessions'
// rows up to date, and lets any number of viewers follow a live turn.
// It is also the task scheduler's Executor.
type agentRunner struct {
	s      *Server
	prices llm.Prices
	log    *slog.Logger

	base   context.Context // chat turns run under it; cancelled by stop
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu   sync.Mutex
	live map[string]*liveRun // session id -> its turn in progress
}

// liveRun is a turn in progress.
type liveRun struct {
	hub      *sessionHub
	cancel   context.CancelFunc
	saved    chan struct{} // closed once the turn's outcome is in the session row
	finished chan struct{} // closed once, besides, its events are persisted
	// decide receives the decision for a task run blocked on an approval.
	decide chan agent.Approval

	mu            sync.Mutex
	cancelledBy   string // set by the cancel route before cancel()
	waitingNotice bool
}

func newAgentRunner(s *Server, prices llm.Prices) *agentRunner {
	ctx, cancel := context.WithCancel(context.Background())
	return &agentRunner{s: s, prices: prices, log: s.log.With("component", "agent"), base: ctx, cancel: cancel,
		live: map[string]*liveRun{}}
}

// recover fails chats a stopped process left running (task runs are the
// task scheduler's to recover; waits for approval survive a restart).
func (r *agentRunner) recover(ctx context.Context) {
	n, err := r.s.db.FailInterruptedChats(ctx, "interrupted: the server stopped while this session was running")
	if err != nil {
		r.log.Error("agent: recovering interrupted sessions", "err", err)
	} else if n > 0 {
		r.log.Warn("agent: sessions interrupted by the last stop marked failed", "count", n)
	}
}

// stop cancels every chat turn and waits for them to be saved.
func (r *agentRunner) stop() {
	r.cancel()
	r.wg.Wait()
}

// hub returns the live event log of a session's turn in progress, if any.
func (r *agentRunner) hub(sessionID string) *sessionHub {
	r.mu.Lock()
	defer r.mu.Unlock()
	if lr := r.live[sessionID]; lr != nil {
		return lr.hub
	}
	return nil
}

func (r *agentRunner) liveRun(sessionID string) *liveRun {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live[sessionID]
}

// settle waits for a turn that has saved its outcome but is still writing
// its last events, so the next turn numbers its events after them. A turn
// still running is not waited for: the caller's BeginTurn answers 409.
func (r *agentRunner) settle(ctx context.Context, sessionID string) {
	if lr := r.liveRun(sessionID); lr != nil && lr.saved != nil {
		select {
		case <-lr.saved:
		default:
			return
		}
		select {
		case <-lr.finished:
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
}

// register makes a turn live; false when the session already has one.
func (r *agentRunner) register(sessionID string, lr *liveRun) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[sessionID] != nil {
		return false
	}
	r.live[sessionID] = lr
	return true
}

func (r *agentRunner) unregister(sessionID string, lr *liveRun) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.live[sessionID] == lr {
		delete(r.live, sessionID)
	}
}

// provider is the LLM for one run of orgID: the org's own key from the
// vault, else the server's settings. With neither, the error is
// scheduler.ErrNoLLM, which names the OPSAGENT_LLM_* variables.
func (r *agentRunner) provider(ctx context.Context, orgID string) (llm.Provider, string, error) {
	cfg := r.s.cfg
	c := llm.Config{Provider: cfg.LLMProvider, BaseURL: cfg.LLMBaseURL, APIKey: cfg.LLMAPIKey, Model: cfg.LLMModel, Logger: r.log}
	key, err := r.s.secrets.LLMKey(ctx, orgID)
	switch {
	case err == nil:
		if key.Provider != "" && key.Provider != c.Provider {
			c.Provider, c.BaseURL, c.Model = key.Provider, "", "" // the server's URL and model belong to another API
		}
		if key.BaseURL != "" {
			c.BaseURL = key.BaseURL
		}
		if key.Model != "" {
			c.Model = key.Model
		}
		c.APIKey = key.APIKey
	case !store.IsNotFound(err):
		return nil, "", fmt.Errorf("the organization's LLM key could not be read: %w", err)
	}
	if c.Provider == "" {
		return nil, "", scheduler.ErrNoLLM
	}
	p, err := llm.New(c)
	if err != nil {
		return nil, "", err
	}
	return p, c.Model, nil
}

// turnSpec is one turn to run.
type turnSpec struct {
	info     AgentRunInfo
	history  []llm.Message
	approval *agent.Approval // continue after a decision instead of asking the model first
	turn     int
	maxSteps int
	maxCost  float64 // USD for this run; 0 = no cap but the policy budget
	agentTyp string
}

// turnResult is what a turn produced, ready to be saved.
type turnResult struct {
	status    agent.Status
	reason    string
	summary   string
	model     string
	usage     llm.Usage
	cost      float64
	steps     int
	toolCalls int
	messages  []llm.Message
	pending   *agent.Pending
}

// runTurn drives one agent.Run (or Resume) and publishes its events on
// hub. It holds back the agent's done (and approval.required) so the caller
// can save the outcome first: a viewer that sees done reads a saved session.
func (r *agentRunner) runTurn(ctx context.Context, spec turnSpec, hub *sessionHub) turnResult {
	now := r.s.Now
	hub.publish("session", SessionEventOut{SessionID: spec.info.SessionID, Turn: spec.turn, Status: store.SessionRunning,
		Source: spec.info.Source, TriggerSource: spec.info.TriggerSource, FirstEventID: hub.first}, now())
	provider, model, err := r.provider(ctx, spec.info.OrgID)
	if err != nil {
		msg := err.Error()
		code := string(llm.ClassOf(err))
		if code == "" {
			code = "llm_config"
		}
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: code, Message: msg}, now())
		return turnResult{status: agent.StatusFailed, reason: msg, messages: spec.history}
	}
	cfg := agent.Config{Provider: provider, Model: model, MaxSteps: spec.maxSteps, Prices: r.prices, Logger: r.log}
	cfg.System = r.systemPrompt(ctx, spec)
	cfg.Tools, err = r.toolSet(ctx, spec.info)
	if err != nil {
		r.log.Error("agent: tool set", "err", err)
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: "tools", Message: "the agent's tools could not be prepared"}, now())
		return turnResult{status: agent.StatusFailed, reason: "internal error: the agent's tools could not be prepared", messages: spec.history}
	}
	if h := r.s.agent.gate; h != nil {
		cfg.Gate = h(ctx, spec.info)
	}
	cfg.Budget = r.budget(ctx, spec)
	var res turnResult
	emit := func(e agent.Event) {
		switch e.Type {
		case agent.EventDone:
			return // the caller publishes done once the outcome is saved
		case agent.EventApprovalRequired:
			return // published with its approval id by the caller
		case agent.EventToolCall:
			res.toolCalls++
		}
		hub.publish(string(e.Type), e.Data, now())
	}
	var out agent.Result
	if spec.approval != nil {
		out, err = agent.Resume(ctx, cfg, spec.history, *spec.approval, emit)
	} else {
		out, err = agent.Run(ctx, cfg, spec.history, emit)
	}
	if err != nil { // an unusable config: nothing ran
		r.log.Error("agent: run refused", "session_id", spec.info.SessionID, "err", err)
		hub.publish(string(agent.EventError), agent.ErrorEvent{Code: "config", Message: err.Error()}, now())
		return turnResult{status: agent.StatusFailed, reason: err.Error(), messages: spec.history}
	}
	if out.Err != nil && out.Status == agent.StatusFailed {
		r.log.Warn("agent: run failed", "session_id", spec.info.SessionID, "code", out.Code, "err", out.Err)
	}
	res.status, res.reason, res.usage, res.cost, res.steps = out.Status, out.Reason, out.Usage, out.Cost, out.Steps
	res.messages, res.pending, res.model = out.Transcript, out.Pending, model
	if out.Status == agent.StatusCompleted {
		res.summary = summarize(out.Transcript)
	}
	return res
}

// systemPrompt frames the agent: its role, the project, the rules it must
// follow (obligations from the policy layer) and its own tools.
func (r *agentRunner) systemPrompt(ctx context.Context, spec turnSpec) string {
	var b strings.Builder
	role := scheduler.AgentTypes[spec.agentTyp]
	if role == "" {
		role = scheduler.AgentTypes["general"]
	}
	fmt.Fprintf(&b, "You are opsagent, %s, helping an engineering team operate its systems.\n", role)
	if p, err := r.s.db.FindProjectInOrg(ctx, spec.info.OrgID, spec.info.ProjectID); err == nil {
		fmt.Fprintf(&b, "Project: %s.\n", p.Name)
		if d := strings.TrimSpace(p.Description); d != "" {
			fmt.Fprintf(&b, "Project context: %s\n", d)
		}
	}
	b.WriteString("Search the knowledge base (search_knowledge) for runbooks, facts and past incidents before guessing; " +
		"use recall for what was remembered before and remember for durable facts worth keeping. " +
		"Be precise, say what you checked, and ask before anything risky.\n")
	if h := r.s.agent.obligations; h != nil {
		if o := strings.TrimSpace(h(ctx, spec.info)); o != "" {
			b.WriteString("\nRules you must always follow:\n")
			b.WriteString(o)
			b.WriteString("\n")
		}
	}
	return b.String()
}

// toolSet is the knowledge tools plus whatever the policy layer adds.
func (r *agentRunner) toolSet(ctx context.Context, info AgentRunInfo) (*agent.ToolSet, error) {
	tools := r.knowledgeTools(info)
	if h := r.s.agent.tools; h != nil {
		tools = append(tools, h(ctx, info)...)
	}
	return agent.NewToolSet(tools...)
}

// budget combines a run's own cost cap with the policy layer's budget.
func (r *agentRunner) budget(ctx context.Context, spec turnSpec) agent.Budget {
	var policy agent.Budget
	if h := r.s.agent.budget; h != nil {
		policy = h(ctx, spec.info)
	}
	if spec.maxCost <= 0 {
		return policy
	}
	return agent.BudgetFunc(func(used llm.Usage, cost float64) error {
		if cost >= spec.maxCost {
			return fmt.Errorf("the run reached its cost cap of $%.2f", spec.maxCost)
		}
		if policy != nil {
			return policy.Allow(used, cost)
		}
		return nil
	})
}

// finishEvents publishes the end of a turn: approval.required (with the
// approval's id) when it stopped for one, then done.
func (r *agentRunner) finishEvents(hub *sessionHub, res turnResult, status, approvalID string, sess *store.AgentSession) {
	now := r.s.Now()
	if res.pending != nil {
		hub.publish(string(agent.EventApprovalRequired), ApprovalRequiredOut{ApprovalRequired: agent.ApprovalRequired{
			Step: res.pending.Step, CallID: res.pending.Call.ID, Name: res.pending.Call.Name,
			Arguments: res.pending.Call.Arguments, Reason: res.pending.Reason}, ApprovalID: approvalID}, now)
	}
	d := DoneOut{Status: status, WaitingApproval: res.pending != nil, AgentStatus: string(res.status), Reason: res.reason,
		Steps: res.steps, Usage: res.usage, Cost: res.cost}
	if sess != nil {
		d.SessionTokensIn, d.SessionTokensOut, d.SessionCost = sess.TokensIn, sess.TokensOut, sess.Cost
	}
	hub.publish(string(agent.EventDone), d, now)
}

// sessionStatus maps a turn's outcome to the session's status.
func sessionStatus(st agent.Status) string {
	switch st {
	case agent.StatusCompleted:
		return store.SessionCompleted
	case agent.StatusCancelled:
		return store.SessionCancelled
	case agent.StatusTimeout:
		return store.SessionTimeout
	case agent.StatusWaitingApproval:
		return store.SessionRunning
	}
	return store.SessionFailed
}

// requestApproval asks the policy layer to record an approval for a turn
// that stopped at a risky call; "" when none is installed or it failed.
func (r *agentRunner) requestApproval(ctx context.Context, info AgentRunInfo, p *agent.Pending) string {
	h := r.s.agent.approvalNeeded
	if h == nil || p == nil {
		return ""
	}
	id, err := h(ctx, info, p)
	if err != nil {
		r.log.Error("agent: approval not recorded", "session_id", info.SessionID, "err", err)
	}
	return id
}

// encodeTranscript stores messages and the pending call as JSON that does
// not escape <, > and &: a resumed run sends the model its history (tool
// arguments included) as it was, not rewritten as \u003e and \u0026.
func encodeTranscript(msgs []llm.Message, p *agent.Pending) (string, string) {
	if msgs == nil {
		msgs = []llm.Message{}
	}
	pending := ""
	if p != nil {
		pending = marshalNoEscape(p)
	}
	return marshalNoEscape(msgs), pending
}

func marshalNoEscape(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
	return strings.TrimSuffix(b.String(), "\n")
}

func decodeTranscript(t *store.Transcript) ([]llm.Message, *agent.Pending, error) {
	var msgs []llm.Message
	if err := json.Unmarshal([]byte(t.Messages), &msgs); err != nil {
		return nil, nil, fmt.Errorf("stored transcript unreadable: %w", err)
	}
	var p *agent.Pending
	if t.Pending != "" {
		p = &agent.Pending{}
		if err := json.Unmarshal([]byte(t.Pending), p); err != nil {
			return nil, nil, fmt.Errorf("stored pending call unreadable: %w", err)
		}
	}
	return msgs, p, nil
}

// titleFrom makes a session title of the first prompt: its first line,
// whitespace collapsed, cut at a word before 80 characters.
func titleFrom(prompt string) string {
	line := strings.TrimSpace(prompt)
	if i := strings.IndexByte(line, '\n'); i >= 0 {
		line = line[:i]
	}
	line = strings.Join(strings.Fields(line), " ")
	return clip(line, 80)
}

// summarize is the session's summary: the last assistant answer, clipped.
func summarize(msgs []llm.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == llm.RoleAssistant && strings.TrimSpace(msgs[i].Content) != "" {
			return clip(strings.Join(strings.Fields(msgs[i].Content), " "), 280)
		}
	}
	return ""
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	cut := string(r[:n-1])
	if i := strings.LastIndexByte(cut, ' '); i > n/2 {
		cut = cut[:i]
	}
	return cut + "…"
}

var errSessionBusy = &store.Error{Code: store.EConflict, Message: "session is running; wait for it to finish or cancel it", Reason: "session_running"}

// isCtxErr reports a context's end.
func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
