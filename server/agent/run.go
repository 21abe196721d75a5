// Package agent is the loop that lets a language model work: it asks the
// model, runs the tools the model calls (after validation and the Gate),
// feeds results back as fenced data, and repeats until the model answers,
// a limit is reached, or a human must approve a call. It stores nothing
// and serves nothing: the caller persists Result.Transcript and streams
// the Events.
package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Status is how a run ended. The first four match the session statuses of
// the API; StatusWaitingApproval is resumable with Resume.
type Status string

// The statuses of Result.
const (
	StatusCompleted       Status = "completed"
	StatusFailed          Status = "failed"
	StatusCancelled       Status = "cancelled"
	StatusTimeout         Status = "timeout"
	StatusWaitingApproval Status = "waiting_approval"
)

// Codes in Result.Code and ErrorEvent.Code besides the llm.ErrorClass values.
const (
	CodeMaxSteps  = "max_steps"
	CodeBudget    = "budget_exceeded"
	CodeTimeout   = "timeout"
	CodeCancelled = "cancelled"
)

// Defaults for zero Config fields.
const (
	DefaultMaxSteps         = 25
	DefaultToolOutputBudget = 16 << 10
)

// Config is one run's set-up. Provider is required; everything else has a
// default. A Config may be reused across runs.
type Config struct {
	Provider llm.Provider
	Model    string // passed to the provider; "" uses the provider's configured model
	System   string // the system prompt; a note on fenced tool output is appended
	Tools    *ToolSet
	// MaxSteps bounds model calls per Run or Resume call (default 25).
	MaxSteps  int
	MaxTokens int // per model call; 0 leaves the provider default
	// ToolOutputBudget bounds, in bytes, each tool result shown to the model
	// (default 16 KiB); the transcript and events keep the full text.
	ToolOutputBudget int
	Gate             Gate   // nil allows every valid call
	Budget           Budget // nil: no limit beyond MaxSteps
	// ContextWindow is the model's context in tokens; 0 takes
	// llm.DefaultContextWindow of the model's name, and when that is
	// unknown too nothing is counted until the server reports a limit.
	ContextWindow int
	// AnswerReserve is kept free of the window for the answer; 0 is
	// DefaultAnswerReserve.
	AnswerReserve int
	// MaxInvalidOutputs bounds consecutive steps whose every tool call
	// was malformed before the run stops with CodeModelOutputInvalid
	// (default 5).
	MaxInvalidOutputs int
	Prices            llm.Prices // nil: llm.DefaultPrices()
	Logger            *slog.Logger
	// Checkpoint, when set, receives the run's state at every step boundary
	// and before each change-capable call (checkpoint.go).
	Checkpoint func(ctx context.Context, cp Checkpoint)
	// From resumes a run cut by a restart from its last checkpoint.
	From *ResumeFrom
}

// Pending is the call a run stopped for in StatusWaitingApproval.
type Pending struct {
	Step   int    `json:"step"`
	Call   Call   `json:"call"`
	Reason string `json:"reason"`
}

// Result is how a run ended and everything it produced.
type Result struct {
	Status Status    `json:"status"`
	Reason string    `json:"reason,omitempty"` // human-readable; empty when completed
	Code   string    `json:"code,omitempty"`   // machine-readable cause when not completed
	Steps  int       `json:"steps"`            // model calls made by this run
	Usage  llm.Usage `json:"usage"`
	Cost   float64   `json:"cost"` // USD, this run
	// Transcript is the whole conversation to store, replacing the history
	// passed in: that history (with any abandoned tool calls answered) plus
	// this run's messages, tool results in full.
	Transcript []llm.Message `json:"transcript"`
	Pending    *Pending      `json:"pending,omitempty"`
	// LearnedContextWindow is a window the model server named in an
	// overflow error during the run (0: none), for the caller to keep.
	LearnedContextWindow int `json:"learned_context_window,omitempty"`
	// Err is the underlying cause of a failure, for logs; not for clients.
	Err error `json:"-"`
}

// Approval is a human's decision on a pending call.
type Approval struct {
	CallID   string
	Approved bool
	Reason   string // shown to the model when denied
}

// ErrInvalidConfig is returned (wrapped) by Run and Resume when the Config
// cannot start a run at all; no event is emitted then.
var ErrInvalidConfig = errors.New("agent: invalid config")

// ErrNotResumable is returned (wrapped) by Resume when the transcript has
// no open tool call with the approval's CallID.
var ErrNotResumable = errors.New("agent: nothing to resume")

// Run continues the conversation in history (ending, normally, with the
// user's message) until the model gives a final answer or the run stops.
// emit (may be nil) receives Events synchronously, in order. The error is
// non-nil only for an unusable Config; every outcome of the run itself,
// failures included, is in the Result.
func Run(ctx context.Context, cfg Config, history []llm.Message, emit func(Event)) (Result, error) {
	return start(ctx, cfg, history, nil, emit)
}

// Resume continues a run that stopped in StatusWaitingApproval, with the
// transcript it returned and the human's decision on the pending call. An
// approved call runs without asking the Gate again; a denied one is
// reported to the model as refused, with the reason.
func Resume(ctx context.Context, cfg Config, transcript []llm.Message, a Approval, emit func(Event)) (Result, error) {
	open := openCalls(transcript)
	found := false
	for _, c := range open {
		found = found || c.ID == a.CallID
	}
	if !found {
		return Result{}, fmt.Errorf("%w: no open tool call %q at the end of the transcript", ErrNotResumable, a.CallID)
	}
	return start(ctx, cfg, transcript, &a, emit)
}

func start(ctx context.Context, cfg Config, history []llm.Message, a *Approval, emit func(Event)) (Result, error) {
	if cfg.Provider == nil {
		return Result{}, fmt.Errorf("%w: no LLM provider", ErrInvalidConfig)
	}
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.ToolOutputBudget <= 0 {
		cfg.ToolOutputBudget = DefaultToolOutputBudget
	}
	if cfg.Prices == nil {
		cfg.Prices = llm.DefaultPrices()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if emit == nil {
		emit = func(Event) {}
	}
	r := &run{cfg: cfg, emit: emit, approval: a, callNames: map[string]string{}}
	r.system = cfg.System
	if len(cfg.Tools.Specs()) > 0 {
		r.system += fencePreamble
	}
	r.initModels()
	for _, m := range closeAbandoned(history) {
		r.append(m)
	}
	r.restore()
	return r.loop(ctx), nil
}
