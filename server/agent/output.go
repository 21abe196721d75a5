package agent

import (
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// Real models get tool calls wrong: JSON that does not parse, arguments
// that miss the schema, tools that do not exist, one call id used twice.
// Each such call is answered with an error that says what was wrong and
// what is valid, so the model can correct itself on the next step; a model
// that keeps failing is stopped at MaxInvalidOutputs consecutive steps
// with CodeModelOutputInvalid, its last output kept in the transcript.

// CodeModelOutputInvalid is Result.Code for a model stopped at the bound
// on malformed output (or that answered nothing, twice).
const CodeModelOutputInvalid = "model_output_invalid"

// DefaultMaxInvalidOutputs is the default of Config.MaxInvalidOutputs.
const DefaultMaxInvalidOutputs = 5

// EventOutputInvalid reports one malformed piece of model output and the
// run's running count of them (OutputInvalidEvent).
const EventOutputInvalid EventType = "output.invalid"

// EventFailover reports that a model failed and the next of the org's
// fallback models was asked instead (FailoverEvent).
const EventFailover EventType = "model.failover"

// OutputInvalidEvent is one malformed call (or an empty answer).
type OutputInvalidEvent struct {
	Step   int    `json:"step"`
	CallID string `json:"call_id,omitempty"`
	Name   string `json:"name,omitempty"`
	Reason string `json:"reason"`
	Count  int    `json:"count"`  // malformed outputs so far in this run
	Streak int    `json:"streak"` // consecutive steps with nothing valid
}

// FailoverEvent is one failover within a step.
type FailoverEvent struct {
	Step   int    `json:"step"`
	From   string `json:"from"`
	To     string `json:"to"`
	Class  string `json:"class"`
	Reason string `json:"reason"`
}

// modelState is the part of a run's state that copes with real models.
type modelState struct {
	win        window
	specs      []llm.ToolSpec
	dupes      map[string]string // renamed call id -> the id it repeated
	stepCalls  int
	stepBad    int
	streak     int
	invalid    int
	lastBad    string
	emptyRetry int // the step whose empty answer was retried
}

func (r *run) initModels() {
	if r.cfg.MaxInvalidOutputs <= 0 {
		r.cfg.MaxInvalidOutputs = DefaultMaxInvalidOutputs
	}
	r.dupes = map[string]string{}
	r.specs = r.toolSpecs()
	r.initWindow()
}

func (r *run) noteDuplicate(newID, oldID string) { r.dupes[newID] = oldID }

// special answers the calls the loop handles itself: a repeated call id
// and get_tool_output. It reports whether c is answered.
func (r *run) special(step int, c llm.ToolCall) bool {
	r.stepCalls++
	if old, dup := r.dupes[c.ID]; dup {
		delete(r.dupes, c.ID)
		r.invalidCall(step, c, fmt.Errorf("this call reused the call id %q of another call in the same message, "+
			"so it did not run; every call needs its own id: repeat the call if you still need it", old))
		return true
	}
	if !r.isGetToolOutput(c) {
		return false
	}
	out, err := r.getToolOutput(c.Arguments)
	if err != nil {
		r.invalidCall(step, c, err)
		return true
	}
	r.answer(step, c, out, false, false, true, false, 0)
	return true
}

// invalidCall answers a malformed call with what was wrong and counts it.
func (r *run) invalidCall(step int, c llm.ToolCall, err error) {
	msg := err.Error()
	r.stepBad++
	r.invalid++
	r.lastBad = msg
	r.answer(step, c, "error: "+msg, true, false, false, true, 0)
	r.emit(Event{Type: EventOutputInvalid, Data: OutputInvalidEvent{Step: step, CallID: c.ID, Name: c.Name,
		Reason: msg, Count: r.invalid, Streak: r.streak + 1}})
}

// invalidLimit closes a step's calls: a step where nothing was valid
// extends the streak, and a streak at the bound stops the run.
func (r *run) invalidLimit(step int) (Result, bool) {
	bad, total := r.stepBad, r.stepCalls
	r.stepBad, r.stepCalls = 0, 0
	if total == 0 || bad < total {
		r.streak = 0
		return Result{}, false
	}
	r.streak++
	if r.streak < r.cfg.MaxInvalidOutputs {
		return Result{}, false
	}
	return r.finish(StatusFailed, CodeModelOutputInvalid, fmt.Sprintf(
		"stopped: the model's tool calls were malformed in %d steps in a row (last: %s); its last output is kept "+
			"in the transcript. A model with better tool calling, or text-format tool calls for this model, may help",
		r.streak, r.lastBad), nil), true
}

// checkAnswer handles what a successful call returned: failover events,
// and an empty answer, which is asked again once (true: ask again).
func (r *run) checkAnswer(step int, resp llm.Response) (retry bool, err error) {
	for _, f := range resp.Failovers {
		r.emit(Event{Type: EventFailover, Data: FailoverEvent{Step: step, From: f.From, To: f.To, Class: string(f.Class), Reason: f.Reason}})
	}
	if strings.TrimSpace(resp.Content) != "" || len(resp.ToolCalls) > 0 {
		return false, nil
	}
	r.usage = r.usage.Add(resp.Usage)
	r.cost += r.cfg.Prices.Cost(r.answeredBy(resp), resp.Usage)
	r.invalid++
	what := "an empty answer"
	if resp.Reasoning != "" {
		what = "only reasoning and no answer"
	}
	if r.emptyRetry != step {
		r.emptyRetry = step
		r.emit(Event{Type: EventOutputInvalid, Data: OutputInvalidEvent{Step: step, Reason: "the model returned " + what + "; asking once more", Count: r.invalid}})
		return true, nil
	}
	return false, &llm.Error{Class: llm.ErrorClass(CodeModelOutputInvalid), Message: "the model returned " + what + " twice in a row"}
}
