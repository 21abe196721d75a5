package agent

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent/llm"
)

// GetToolOutputName is the built-in tool that reads a stored tool result
// back, page by page: the other half of compaction and truncation, whose
// notes name it.
const GetToolOutputName = "get_tool_output"

var getToolOutputSpec = llm.ToolSpec{
	Name: GetToolOutputName,
	Description: "Read the full output of an earlier tool call of this session, one page at a time. Use it when a " +
		"result was shortened or compacted (its note names the call_id).",
	Parameters: json.RawMessage(`{"type":"object","properties":{` +
		`"call_id":{"type":"string","minLength":1,"description":"the call_id named in the note"},` +
		`"page":{"type":"integer","minimum":1,"description":"1 for the first page (default)"}},` +
		`"required":["call_id"],"additionalProperties":false}`),
}

// GetToolOutputSpec is the built-in tool's definition, as offered to models.
func GetToolOutputSpec() llm.ToolSpec { return getToolOutputSpec }

// toolSpecs is what the model is offered: the run's tools plus
// get_tool_output, when there are tools at all.
func (r *run) toolSpecs() []llm.ToolSpec {
	specs := r.cfg.Tools.Specs()
	if len(specs) == 0 {
		return nil
	}
	if _, clash := r.cfg.Tools.Lookup(GetToolOutputName); clash {
		return specs
	}
	return append(append([]llm.ToolSpec(nil), specs...), getToolOutputSpec)
}

// isGetToolOutput reports whether c is the built-in (not a same-named tool
// of the caller's, which then wins).
func (r *run) isGetToolOutput(c llm.ToolCall) bool {
	if c.Name != GetToolOutputName {
		return false
	}
	_, own := r.cfg.Tools.Lookup(GetToolOutputName)
	return !own
}

// pageBytes sizes a page to an eighth of the usable window (the estimate
// charges about one token per two and a half bytes of log text), within
// the per-result budget.
func (r *run) pageBytes() int {
	page := r.cfg.ToolOutputBudget
	if r.win.size > 0 {
		page = min(page, max((r.win.size-r.win.reserve)/4*2, 1024))
	}
	return page
}

// resultBudget bounds each tool result as first shown to the model: the
// configured budget, and no more than a page of a small window, so the
// newest result always fits beside the rest.
func (r *run) resultBudget() int { return r.pageBytes() }

// getToolOutput answers a get_tool_output call from the transcript.
func (r *run) getToolOutput(args json.RawMessage) (string, error) {
	var in struct {
		CallID string `json:"call_id"`
		Page   int    `json:"page"`
	}
	dec := json.NewDecoder(strings.NewReader(string(args)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil || in.CallID == "" {
		return "", fmt.Errorf("arguments for %s must be {\"call_id\": string, \"page\": integer >= 1}; got %s",
			GetToolOutputName, clipBytes(string(args), 200))
	}
	if in.Page <= 0 {
		in.Page = 1
	}
	var out *llm.Message
	var known []string
	for i := range r.msgs {
		m := &r.msgs[i]
		if m.Role != llm.RoleTool || m.Platform {
			continue
		}
		known = append(known, m.ToolCallID)
		if m.ToolCallID == in.CallID {
			out = m
		}
	}
	if out == nil {
		if len(known) > 10 {
			known = known[len(known)-10:]
		}
		return "", fmt.Errorf("no stored output for call_id %q; recent call_ids with output: %s", in.CallID, strings.Join(known, ", "))
	}
	size := r.pageBytes()
	pages := max((len(out.Content)+size-1)/size, 1)
	if in.Page > pages {
		return "", fmt.Errorf("call_id %q has %d page(s) of %d bytes; page %d does not exist", in.CallID, pages, size, in.Page)
	}
	from := cutForward(out.Content, (in.Page-1)*size)
	to := len(out.Content)
	if in.Page < pages {
		to = len(cutBack(out.Content, in.Page*size))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "output of call %s (%s), page %d of %d, bytes %d-%d of %d:\n%s", in.CallID, r.callNames[in.CallID],
		in.Page, pages, from, to, len(out.Content), out.Content[from:to])
	if in.Page < pages {
		fmt.Fprintf(&b, "\n[next: %s(call_id=%q, page=%d)]", GetToolOutputName, in.CallID, in.Page+1)
	}
	return b.String(), nil
}
