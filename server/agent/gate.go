package agent

import (
	"context"
	"encoding/json"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Call is a tool call as the Gate sees it: arguments already valid.
type Call struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
	ReadOnly  bool            `json:"read_only"`
}

// Verdict is what a Gate decided.
type Verdict string

// The three verdicts.
const (
	VerdictAllow        Verdict = "allow"
	VerdictBlock        Verdict = "block"         // the model gets an error result with the reason
	VerdictNeedApproval Verdict = "need_approval" // the run pauses until a human decides
)

// Decision is a Gate's answer for one call.
type Decision struct {
	Verdict Verdict `json:"verdict"`
	Reason  string  `json:"reason,omitempty"`
}

// Allow lets the call run.
func Allow() Decision { return Decision{Verdict: VerdictAllow} }

// Block refuses the call; the model reads the reason and may try otherwise.
func Block(reason string) Decision { return Decision{Verdict: VerdictBlock, Reason: reason} }

// NeedApproval pauses the run in StatusWaitingApproval; resume it with Resume.
func NeedApproval(reason string) Decision {
	return Decision{Verdict: VerdictNeedApproval, Reason: reason}
}

// Gate is consulted before every tool call, after its arguments are
// validated: the place for must_never rules and human approval.
type Gate interface {
	Check(ctx context.Context, call Call) Decision
}

// GateFunc adapts a function to Gate.
type GateFunc func(ctx context.Context, call Call) Decision

func (f GateFunc) Check(ctx context.Context, call Call) Decision { return f(ctx, call) }

// Budget is consulted before every model call with the usage of this run
// so far (and its cost); a non-nil error stops the run, status failed, with
// the error's text as the reason.
type Budget interface {
	Allow(used llm.Usage, cost float64) error
}

// BudgetFunc adapts a function to Budget.
type BudgetFunc func(used llm.Usage, cost float64) error

func (f BudgetFunc) Allow(used llm.Usage, cost float64) error { return f(used, cost) }
