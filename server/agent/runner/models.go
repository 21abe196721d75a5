package runner

import (
	"context"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/secrets"
	"github.com/opsagent/opsagent/store"
)

// An org's models, as its settings say (server/model_settings.go): the
// primary's context window and answer reserve, whether text-format tool
// calls are read, and the fallback models tried in order when the
// primary times out, fails with a 5xx, is refused a connection or is rate
// limited for longer than DefaultFailoverRetryAfter.

// LLMFallbacks lists an org's fallback models (*secrets.Keeper does).
type LLMFallbacks interface {
	LLMFallbacks(ctx context.Context, orgID string) ([]secrets.LLMFallback, error)
}

// TextToolCallsMode turns a stored mode into llm.Config.TextToolCalls.
func TextToolCallsMode(mode string) *bool {
	on, off := true, false
	switch mode {
	case store.TextToolCallsOn:
		return &on
	case store.TextToolCallsOff:
		return &off
	}
	return nil
}

// settings reads the org's model settings; a failure logs and uses the defaults.
func (r *Runner) settings(ctx context.Context, orgID string) *store.ModelSettings {
	s, err := r.d.DB.FindModelSettings(ctx, orgID)
	if err != nil {
		r.log.Warn("agent: model settings unreadable, defaults apply", "org_id", orgID, "err", err)
		return &store.ModelSettings{OrgID: orgID, TextToolCalls: store.TextToolCallsAuto}
	}
	return s
}

func (r *Runner) fallbacks(ctx context.Context, orgID string) []secrets.LLMFallback {
	fk, ok := r.d.Keys.(LLMFallbacks)
	if !ok || r.d.Keys == nil {
		return nil
	}
	list, err := fk.LLMFallbacks(ctx, orgID)
	if err != nil {
		r.log.Warn("agent: fallback models unreadable, none used", "org_id", orgID, "err", err)
		return nil
	}
	return list
}

// withFallbacks builds the org's provider from the resolved primary
// config: alone, or first of a failover chain.
func (r *Runner) withFallbacks(ctx context.Context, orgID string, c llm.Config) (llm.Provider, string, error) {
	c.TextToolCalls = TextToolCallsMode(r.settings(ctx, orgID).TextToolCalls)
	fbs := r.fallbacks(ctx, orgID)
	if len(fbs) > 0 {
		// With somewhere to go, the primary gives up sooner.
		if c.Retry.MaxAttempts == 0 || c.Retry.MaxAttempts > 2 {
			c.Retry.MaxAttempts = 2
		}
		c.Retry.GiveUpAfter = llm.DefaultFailoverRetryAfter
	}
	primary, err := llm.New(c)
	if err != nil {
		return nil, "", err
	}
	members := []llm.Member{{Provider: primary, Model: c.Model}}
	for _, f := range fbs {
		fc := FallbackConfig(c, f.Key)
		fc.Logger = r.log
		p, err := llm.New(fc)
		if err != nil {
			r.log.Warn("agent: fallback model skipped", "org_id", orgID, "position", f.Position, "err", err)
			continue
		}
		members = append(members, llm.Member{Provider: p, Model: f.Key.Model, MaxTokens: f.Key.AnswerReserve})
	}
	return llm.NewChain(llm.DefaultFailoverRetryAfter, members...), c.Model, nil
}

// FallbackConfig is the llm.Config of a fallback: its own provider, URL,
// key and model, the primary's timeouts and HTTP client.
func FallbackConfig(primary llm.Config, k secrets.LLMKey) llm.Config {
	return llm.Config{Provider: k.Provider, BaseURL: k.BaseURL, APIKey: k.APIKey, Model: k.Model,
		Timeout: primary.Timeout, Retry: primary.Retry, HTTPClient: primary.HTTPClient,
		TextToolCalls: TextToolCallsMode(k.TextToolCalls)}
}

// applyModelSettings sets a run's context window and answer reserve: the
// org's, else what a server reported for this model, else the model
// name's default. With fallbacks the smallest window of the chain
// governs, so a failover never meets a request too long for it.
func (r *Runner) applyModelSettings(ctx context.Context, orgID, model string, cfg *agent.Config) {
	s := r.settings(ctx, orgID)
	cfg.ContextWindow, cfg.AnswerReserve = s.ContextWindow, s.AnswerReserve
	// A window the server itself named wins over a larger configured one.
	if l := s.LearnedContextWindow; l > 0 && s.LearnedModel == model && (cfg.ContextWindow == 0 || l < cfg.ContextWindow) {
		cfg.ContextWindow = l
	}
	if cfg.ContextWindow == 0 {
		cfg.ContextWindow = llm.DefaultContextWindow(model)
	}
	for _, f := range r.fallbacks(ctx, orgID) {
		w := f.Key.ContextWindow
		if w == 0 {
			w = llm.DefaultContextWindow(f.Key.Model)
		}
		if w > 0 && (cfg.ContextWindow == 0 || w < cfg.ContextWindow) {
			cfg.ContextWindow = w
		}
	}
}

// learnWindow keeps a window a model server reported in its own error.
func (r *Runner) learnWindow(ctx context.Context, info RunInfo, model string, out agent.Result) {
	r.markEstimated(ctx, info, out.Usage)
	orgID := info.OrgID
	if out.LearnedContextWindow <= 0 {
		return
	}
	if err := r.d.DB.LearnContextWindow(ctx, orgID, model, out.LearnedContextWindow); err != nil {
		r.log.Warn("agent: learned context window not kept", "org_id", orgID, "err", err)
	}
}

// markEstimated keeps that a session's counts are partly estimated.
func (r *Runner) markEstimated(ctx context.Context, info RunInfo, u llm.Usage) {
	if !u.Estimated {
		return
	}
	if err := r.d.DB.MarkTokensEstimated(ctx, info.OrgID, info.SessionID); err != nil {
		r.log.Warn("agent: estimated usage not marked", "session_id", info.SessionID, "err", err)
	}
}

// failedOver counts a failover for the metrics.
func (r *Runner) failedOver(e agent.Event) {
	f, ok := e.Data.(agent.FailoverEvent)
	if !ok {
		return
	}
	if m, ok := r.d.Telemetry.(interface{ LLMFailover(from, to, class string) }); ok {
		m.LLMFailover(f.From, f.To, f.Class)
	}
}

// ModelTest is the outcome of one test call to a configured model.
type ModelTest struct {
	OK        bool      `json:"ok"`
	Provider  string    `json:"provider"`
	Model     string    `json:"model"`
	LatencyMS int64     `json:"latency_ms"`
	Reply     string    `json:"reply,omitempty"`
	Reasoning bool      `json:"reasoning,omitempty"` // the model thought before answering
	Usage     llm.Usage `json:"usage"`
	Class     string    `json:"class,omitempty"` // llm.ErrorClass of a failure
	Error     string    `json:"error,omitempty"`
	// ContextWindow is what runs will assume for this model (0: unknown
	// until the server reports it).
	ContextWindow int `json:"context_window"`
}

// TestModel makes one short call to the org's primary (position 0), to
// fallback position, or to candidate when it is given (a fallback not yet
// saved), the way a run would reach it.
func (r *Runner) TestModel(ctx context.Context, orgID string, position int, candidate *secrets.LLMKey) ModelTest {
	primary, err := r.primaryConfig(ctx, orgID)
	if err != nil && candidate == nil {
		return ModelTest{Class: string(llm.ClassConfig), Error: err.Error()}
	}
	c, window := primary, r.settings(ctx, orgID).ContextWindow
	switch {
	case candidate != nil:
		c, window = FallbackConfig(primary, *candidate), candidate.ContextWindow
	case position > 0:
		found := false
		for _, f := range r.fallbacks(ctx, orgID) {
			if f.Position == position {
				c, window, found = FallbackConfig(primary, f.Key), f.Key.ContextWindow, true
			}
		}
		if !found {
			return ModelTest{Class: string(llm.ClassConfig), Error: "no fallback model at that position"}
		}
	default:
		c.TextToolCalls = TextToolCallsMode(r.settings(ctx, orgID).TextToolCalls)
	}
	if window == 0 {
		window = llm.DefaultContextWindow(c.Model)
	}
	c.Logger, c.Timeout, c.Retry = r.log, 30*time.Second, llm.RetryPolicy{MaxAttempts: 1}
	out := ModelTest{Provider: c.Provider, Model: c.Model, ContextWindow: window}
	p, err := llm.New(c)
	if err != nil {
		out.Class, out.Error = string(llm.ClassOf(err)), err.Error()
		return out
	}
	started := time.Now()
	resp, err := p.Stream(ctx, llm.Request{System: "This is a connection test. Reply with the single word OK.", MaxTokens: 64,
		Messages: []llm.Message{{Role: llm.RoleUser, Content: "ping"}}}, nil)
	out.LatencyMS = time.Since(started).Milliseconds()
	if err != nil {
		out.Class, out.Error = string(llm.ClassOf(err)), err.Error()
		return out
	}
	out.OK, out.Usage, out.Reasoning = true, resp.Usage, resp.Reasoning != ""
	out.Reply = clip(strings.TrimSpace(resp.Content), 200)
	if resp.Model != "" {
		out.Model = resp.Model
	}
	return out
}

// PromptFloor is the estimated size, in tokens, of what every request of
// the org's runs carries before any conversation: the system prompt of a
// general agent and the tool definitions. A context window must hold it
// plus the answer reserve.
func (r *Runner) PromptFloor(ctx context.Context, orgID string) int {
	spec := turnSpec{info: RunInfo{OrgID: orgID}, agentTyp: "general"}
	req := llm.Request{System: r.systemPrompt(ctx, spec) + agent.FencePreamble}
	if tools, err := r.toolSet(ctx, spec.info, nil); err == nil {
		req.Tools = append(tools.Specs(), agent.GetToolOutputSpec())
	}
	return llm.EstimateRequest(req)
}
