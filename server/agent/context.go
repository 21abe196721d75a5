package agent

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// A request is counted before it is sent (llm.EstimateRequest, which never
// undercounts) and kept inside the model's context window minus the answer
// reserve, in a fixed order: older tool results are compacted to their
// call, exit code, first and last lines and a note saying how to read them
// back (get_tool_output); then everything but the latest step is summarized
// by a model call of its own; only then does the run fail, in words. The
// transcript keeps every message in full: only what the model is shown
// shrinks.

// Defaults of the context accounting.
const (
	// DefaultMaxReserve caps the default answer reserve of large windows.
	DefaultMaxReserve = 8192
	// smallWindow: below it the reserve is also sent as max_tokens, so a
	// local server cannot spend the window on one runaway answer.
	smallWindow = 32768
	// compactLines is how many head and tail lines a compacted result keeps.
	compactLines = 5
	// compactLineBytes clips each kept line.
	compactLineBytes = 200
)

// CodeContextExceeded is Result.Code when a request cannot be made to fit.
const CodeContextExceeded = string(llm.ClassContextOverflow)

// DefaultAnswerReserve is the reserve used when none is set: the run's
// MaxTokens, else an eighth of the window between 512 and 8192 tokens.
func DefaultAnswerReserve(window, maxTokens int) int {
	if maxTokens > 0 {
		return maxTokens
	}
	return min(max(window/8, 512), DefaultMaxReserve)
}

// window is the context accounting state of one run.
type window struct {
	size      int     // tokens; 0 = unknown, nothing is counted
	reserve   int     // tokens kept free for the answer
	calib     float64 // >= 1: how far the server's counts ran above ours
	compacted map[int]int
	omitted   map[int]bool // view indexes replaced by a summary
	summary   map[int]bool // view indexes that are summaries
	retried   int          // the step whose overflow was retried
	lastRaw   int          // the last request's raw estimate
	learned   int          // a window size the server told us
}

func (r *run) initWindow() {
	w := &r.win
	w.size = r.cfg.ContextWindow
	if w.size <= 0 {
		w.size = llm.DefaultContextWindow(r.modelName())
	}
	w.reserve = r.cfg.AnswerReserve
	if w.reserve <= 0 {
		w.reserve = DefaultAnswerReserve(w.size, r.cfg.MaxTokens)
	}
	w.calib = 1
	w.compacted, w.omitted, w.summary = map[int]int{}, map[int]bool{}, map[int]bool{}
}

// request is the next model call as the model will see it.
func (r *run) request() llm.Request {
	msgs := make([]llm.Message, 0, len(r.view))
	for i, m := range r.view {
		if !r.win.omitted[i] {
			msgs = append(msgs, m)
		}
	}
	maxTokens := r.cfg.MaxTokens
	if maxTokens == 0 && r.win.size > 0 && r.win.size <= smallWindow {
		maxTokens = r.win.reserve
	}
	return llm.Request{Model: r.cfg.Model, System: r.system, Messages: msgs, Tools: r.specs, MaxTokens: maxTokens}
}

// estimate is the calibrated count of req.
func (r *run) estimate(req llm.Request) int {
	raw := llm.EstimateRequest(req)
	r.win.lastRaw = raw
	return int(math.Ceil(float64(raw) * r.win.calib))
}

// calibrate raises the estimate's factor when a server counted more than
// we did (a tokenizer outside the families the estimate was checked on).
func (r *run) calibrate(u llm.Usage) {
	if u.Estimated || r.win.lastRaw == 0 || u.InputTokens <= r.win.lastRaw {
		return
	}
	r.win.calib = max(r.win.calib, float64(u.InputTokens)/float64(r.win.lastRaw)*1.05)
}

// ask makes the step's model call inside the window: it fits the request,
// streams it, and on an overflow the server reports it learns the limit,
// compacts further and retries once.
func (r *run) ask(ctx context.Context, step int, onDelta func(llm.Delta)) (llm.Response, error) {
	for {
		if err := r.fit(ctx, step); err != nil {
			return llm.Response{}, err
		}
		resp, err := r.cfg.Provider.Stream(ctx, r.request(), onDelta)
		if err == nil {
			r.calibrate(resp.Usage)
			again, bad := r.checkAnswer(step, resp)
			if again {
				continue
			}
			return resp, bad
		}
		var le *llm.Error
		if llm.ClassOf(err) != llm.ClassContextOverflow || r.win.retried == step || !asLLM(err, &le) {
			if llm.ClassOf(err) == llm.ClassContextOverflow {
				return llm.Response{}, r.overflowFailure(err)
			}
			return llm.Response{}, err
		}
		r.win.retried = step
		r.learn(le)
		r.emit(Event{Type: EventContext, Data: ContextEvent{Step: step, Action: "overflow_retry", Window: r.win.size,
			Reserve: r.win.reserve, Message: "the model server refused the request as too long (" + le.Message +
				"); compacting and retrying once"}})
	}
}

// learn takes the window the server named (or, when it named none, assumes
// it is a quarter below what was sent) and calibrates on its prompt count.
func (r *run) learn(e *llm.Error) {
	sent := int(math.Ceil(float64(r.win.lastRaw) * r.win.calib))
	switch {
	case e.ContextLimit > 0:
		r.win.learned = e.ContextLimit
		if r.win.size == 0 || e.ContextLimit < r.win.size {
			r.win.size = e.ContextLimit
		}
	case r.win.size == 0 || sent <= r.win.size:
		r.win.size = max(sent*3/4, 1)
	}
	if r.cfg.AnswerReserve <= 0 {
		r.win.reserve = min(r.win.reserve, DefaultAnswerReserve(r.win.size, r.cfg.MaxTokens))
	}
	if e.PromptTokens > 0 && r.win.lastRaw > 0 && e.PromptTokens > r.win.lastRaw {
		r.win.calib = max(r.win.calib, float64(e.PromptTokens)/float64(r.win.lastRaw)*1.05)
	}
	if sent > 0 && r.win.size > 0 && sent <= r.win.size-r.win.reserve {
		// Our count said it fitted and the server disagreed: count higher.
		r.win.calib *= float64(r.win.size) / float64(max(sent, 1)) * 1.1
	}
}

func asLLM(err error, target **llm.Error) bool {
	e, ok := err.(*llm.Error)
	if ok {
		*target = e
	}
	return ok
}

// overflowFailure explains an overflow that compaction could not cure.
func (r *run) overflowFailure(cause error) error {
	return &llm.Error{Class: llm.ClassContextOverflow, Err: cause, Message: fmt.Sprintf(
		"the conversation does not fit the model's context window of %d tokens (%d kept for the answer) even after "+
			"compacting tool results and summarizing earlier turns, and the model server refused it again: %v. "+
			"Raise the context window (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; llama.cpp: --ctx-size; vLLM: "+
			"--max-model-len) and the org's context_window setting, or start a new session",
		r.win.size, r.win.reserve, cause)}
}

// fit makes the next request fit the window, or says why it cannot.
func (r *run) fit(ctx context.Context, step int) error {
	if r.win.size <= 0 {
		return nil
	}
	budget := r.win.size - r.win.reserve
	before := r.estimate(r.request())
	if before <= budget {
		return nil
	}
	compacted := 0
	for _, pass := range []struct {
		latest bool
		lines  int
	}{{false, compactLines}, {true, compactLines}, {true, 1}} {
		compacted += r.compact(budget, pass.latest, pass.lines)
		if r.estimate(r.request()) <= budget {
			break
		}
	}
	if after := r.estimate(r.request()); compacted > 0 {
		r.emit(Event{Type: EventContext, Data: ContextEvent{Step: step, Action: "compacted", Compacted: compacted,
			TokensBefore: before, TokensAfter: after, Window: r.win.size, Reserve: r.win.reserve}})
		if after <= budget {
			return nil
		}
	}
	if err := r.summarize(ctx, step, budget); err != nil {
		return err
	}
	if after := r.estimate(r.request()); after > budget {
		return &llm.Error{Class: llm.ClassContextOverflow, Message: fmt.Sprintf(
			"the next request needs about %d tokens but the model's context window of %d tokens keeps %d for the answer, "+
				"even after compacting tool results and summarizing earlier turns (the system prompt and tool "+
				"definitions alone take about %d). Raise the context window (Ollama: OLLAMA_CONTEXT_LENGTH or num_ctx; "+
				"llama.cpp: --ctx-size) and the org's context_window setting, or start a new session",
			after, r.win.size, r.win.reserve, r.estimate(llm.Request{System: r.system, Tools: r.specs}))}
	}
	return nil
}

// compact shrinks tool results, oldest first, until the request fits:
// those the model has already read (latest=false), then all. It returns
// how many it shrank.
func (r *run) compact(budget int, latest bool, lines int) int {
	last := len(r.view)
	if !latest {
		for last > 0 && r.view[last-1].Role == llm.RoleTool {
			last--
		}
	}
	n := 0
	for i := 0; i < last; i++ {
		m := r.msgs[i]
		if m.Role != llm.RoleTool || m.Platform || r.win.omitted[i] {
			continue
		}
		if done, ok := r.win.compacted[i]; ok && done <= lines {
			continue
		}
		short := r.compactResult(m, lines)
		if len(short) >= len(r.view[i].Content) {
			continue
		}
		r.view[i].Content = short
		r.win.compacted[i] = lines
		n++
		if r.estimate(r.request()) <= budget {
			break
		}
	}
	return n
}

var exitCode = regexp.MustCompile(`(?m)exit (?:code|status)[ :=]*(-?\d+)`)

// compactResult is what stays of a tool result: the call, its exit code,
// its first and last lines, and how to read the rest.
func (r *run) compactResult(m llm.Message, lines int) string {
	name, args := r.callOf(m.ToolCallID)
	all := strings.Split(strings.TrimRight(m.Content, "\n"), "\n")
	var b strings.Builder
	fmt.Fprintf(&b, "[compacted to save context: %s(%s)", name, clipBytes(string(args), 300))
	if c := exitCode.FindStringSubmatch(m.Content); c != nil {
		fmt.Fprintf(&b, ", exit code %s", c[1])
	}
	fmt.Fprintf(&b, ", %d bytes in %d lines]\n", len(m.Content), len(all))
	if len(all) <= 2*lines {
		for _, l := range all {
			b.WriteString(clipBytes(l, compactLineBytes) + "\n")
		}
	} else {
		for _, l := range all[:lines] {
			b.WriteString(clipBytes(l, compactLineBytes) + "\n")
		}
		fmt.Fprintf(&b, "[... %d lines omitted ...]\n", len(all)-2*lines)
		for _, l := range all[len(all)-lines:] {
			b.WriteString(clipBytes(l, compactLineBytes) + "\n")
		}
	}
	b.WriteString("full output: " + readBackNote(m.ToolCallID))
	return fence(name, b.String())
}

// readBackNote is how the model is told to read a result back.
func readBackNote(callID string) string {
	return fmt.Sprintf("`%s(call_id=%q)`", GetToolOutputName, callID)
}

// callOf finds the name and arguments of the call a result answers.
func (r *run) callOf(id string) (string, []byte) {
	for i := len(r.msgs) - 1; i >= 0; i-- {
		for _, c := range r.msgs[i].ToolCalls {
			if c.ID == id {
				return c.Name, c.Arguments
			}
		}
	}
	return r.callNames[id], nil
}

func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutBack(s, n) + "…"
}
