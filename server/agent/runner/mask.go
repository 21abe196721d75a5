package runner

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/opsagent/opsagent/server/agent"
)

// Masking is a Policy that knows values no tool output may carry (the
// project's and its org's secrets). Every tool of a run, the runner's own
// included, is wrapped so its output and its error text are masked before
// the model, the events, the transcript or a log see them, whichever call
// put the value there (a file written by an earlier call, a runbook, a
// response body).
type Masking interface {
	// Masker returns the function that masks text for the run.
	Masker(ctx context.Context, run RunInfo) (func(string) string, error)
}

// maskedTool masks one tool's results with the masker as it is when the
// call runs (a secret added mid-session is masked from then on).
type maskedTool struct {
	agent.Tool
	masker func(ctx context.Context) (func(string) string, error)
}

// errUnmasked is the answer when the secrets to mask could not be read:
// the output is withheld rather than shown unmasked.
var errUnmasked = errors.New("the tool ran, but its output is withheld: the secrets it must be masked against could not be read")

func (t maskedTool) Run(ctx context.Context, args json.RawMessage) (string, error) {
	out, err := t.Tool.Run(ctx, args)
	mask, merr := t.masker(ctx)
	if merr != nil {
		return "", errUnmasked
	}
	if err != nil {
		return mask(out), maskError(err, mask)
	}
	return mask(out), nil
}

// maskError masks an error's text and keeps what the loop reads from its
// type: a platform refusal stays a refusal (answered as the platform's
// words, marked blocked), other errors still unwrap to their cause.
func maskError(err error, mask func(string) string) error {
	var refused *agent.Refusal
	if errors.As(err, &refused) {
		return &agent.Refusal{Reason: mask(refused.Reason)}
	}
	return maskedError{msg: mask(err.Error()), cause: err}
}

// maskedError shows the masked text and unwraps to the original, so
// errors.Is on causes such as context.Canceled keeps working.
type maskedError struct {
	msg   string
	cause error
}

func (e maskedError) Error() string { return e.msg }
func (e maskedError) Unwrap() error { return e.cause }

// masked wraps tools when the policy masks.
func (r *Runner) masked(info RunInfo, tools []agent.Tool) []agent.Tool {
	m, ok := r.d.Policy.(Masking)
	if !ok {
		return tools
	}
	masker := func(ctx context.Context) (func(string) string, error) { return m.Masker(ctx, info) }
	out := make([]agent.Tool, len(tools))
	for i, t := range tools {
		out[i] = maskedTool{Tool: t, masker: masker}
	}
	return out
}
