package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// Payloads of the chat events this client shows (server/chat.go lists them all).
type (
	deltaData struct {
		Step int    `json:"step"`
		Text string `json:"text"`
	}
	messageData struct {
		Step    int    `json:"step"`
		Content string `json:"content"`
	}
	toolCallData struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	toolResultData struct {
		Name       string `json:"name"`
		Output     string `json:"output"`
		IsError    bool   `json:"is_error"`
		Blocked    bool   `json:"blocked"`
		Truncated  bool   `json:"truncated"`
		DurationMS int64  `json:"duration_ms"`
	}
	approvalData struct {
		Name       string          `json:"name"`
		Arguments  json.RawMessage `json:"arguments"`
		Reason     string          `json:"reason"`
		ApprovalID string          `json:"approval_id"`
	}
	errorData struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	}
	doneData struct {
		Status          string  `json:"status"`
		WaitingApproval bool    `json:"waiting_approval"`
		AgentStatus     string  `json:"agent_status"`
		Reason          string  `json:"reason"`
		Steps           int     `json:"steps"`
		Cost            float64 `json:"cost"`
		SessionCost     float64 `json:"session_cost"`
		Usage           struct {
			InputTokens  int `json:"input_tokens"`
			OutputTokens int `json:"output_tokens"`
		} `json:"usage"`
	}
)

// renderer prints a session's events: as text for people (the answer as it
// streams, tool calls and results, approvals), or with --json as one JSON
// object per line ({"id", "event", "data"}), each event exactly once.
type renderer struct {
	o        *output
	w        io.Writer
	streamed map[int]bool // steps whose text arrived as deltas
	midLine  bool         // the cursor is not at the start of a line
	errShown bool         // this turn's error event was printed
	approval *approvalData
}

func newRenderer(o *output) *renderer {
	return &renderer{o: o, w: o.w, streamed: map[int]bool{}}
}

func (r *renderer) newline() {
	if r.midLine {
		fmt.Fprintln(r.w)
		r.midLine = false
	}
}

func (r *renderer) show(ev event) {
	if r.o.json {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(r.w, "%s\n", b)
		return
	}
	if r.o.quiet {
		return
	}
	switch ev.Type {
	case "session":
		r.streamed, r.errShown = map[int]bool{}, false
	case "message.delta":
		var d deltaData
		if json.Unmarshal(ev.Data, &d) == nil && d.Text != "" {
			fmt.Fprint(r.w, d.Text)
			r.streamed[d.Step] = true
			r.midLine = !strings.HasSuffix(d.Text, "\n")
		}
	case "message":
		var d messageData
		if json.Unmarshal(ev.Data, &d) == nil && !r.streamed[d.Step] && d.Content != "" {
			fmt.Fprint(r.w, d.Content)
			r.midLine = !strings.HasSuffix(d.Content, "\n")
		}
		r.newline()
	case "tool.call":
		var d toolCallData
		if json.Unmarshal(ev.Data, &d) == nil {
			r.newline()
			fmt.Fprintf(r.w, "%s %s %s\n", r.o.paint(cyan, "▸"), r.o.paint(bold, d.Name), clip(callText(d.Arguments), 300))
		}
	case "tool.result":
		var d toolResultData
		if json.Unmarshal(ev.Data, &d) == nil {
			r.newline()
			mark, style := "✓", green
			switch {
			case d.Blocked:
				mark, style = "⊘ blocked", red
			case d.IsError:
				mark, style = "✗", red
			}
			fmt.Fprintf(r.w, "  %s %s %s\n", r.o.paint(style, mark), d.Name, r.o.paint(dim, fmt.Sprintf("(%d ms)", d.DurationMS)))
			for _, l := range headLines(d.Output, 12) {
				fmt.Fprintf(r.w, "    %s\n", r.o.paint(dim, l))
			}
		}
	case "evidence", "finding":
		r.newline()
		r.investigation(ev.Type, ev.Data) // render_investigation.go
	case "approval.required":
		var d approvalData
		if json.Unmarshal(ev.Data, &d) == nil {
			r.newline()
			r.approval = &d
			fmt.Fprintf(r.w, "%s %s %s\n", r.o.paint(yellow, "⚠ approval needed:"), r.o.paint(bold, d.Name), clip(callText(d.Arguments), 300))
			if d.Reason != "" {
				fmt.Fprintf(r.w, "  %s %s\n", r.o.paint(dim, "why:"), d.Reason)
			}
		}
	case "error":
		var d errorData
		if json.Unmarshal(ev.Data, &d) == nil {
			r.newline()
			r.errShown = true
			fmt.Fprintf(r.o.errw, "%s %s\n", r.o.errPaint(red, "error:"), d.Message)
		}
	case "run.resumed":
		// The server restarted (or another took over) and the turn goes on
		// from its last completed step; a partly streamed answer is asked again.
		r.newline()
		r.streamed = map[int]bool{}
		fmt.Fprintf(r.o.errw, "%s\n", r.o.errPaint(dim, "(the server restarted; the turn resumes from its last completed step)"))
	case "done":
		r.newline()
	}
}

// summary is the line after a turn: its outcome, steps, tokens and cost.
func (r *renderer) summary(d *doneData, sid string) {
	if r.o.json || r.o.quiet {
		return
	}
	state := d.Status
	if d.WaitingApproval {
		state = "waiting for approval"
	}
	line := fmt.Sprintf("%s · %d step(s) · %d→%d tokens · %s", state, d.Steps, d.Usage.InputTokens, d.Usage.OutputTokens, money(d.Cost))
	if d.Reason != "" && !d.WaitingApproval && !r.errShown {
		line += " · " + d.Reason
	}
	if sid != "" {
		line += " · session " + sid
	}
	fmt.Fprintln(r.o.errw, r.o.errPaint(dim, "── "+line))
}

// compactJSON is a value on one line, as written (no \u003e for ">").
func compactJSON(raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	if s, ok := v.(string); ok {
		return s // arguments sent as a JSON string
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return string(raw)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// callText shows a tool call's arguments; a command is shown as a command.
func callText(raw json.RawMessage) string {
	var args struct {
		Command string `json:"command"`
		Target  string `json:"target"`
	}
	if json.Unmarshal(raw, &args) == nil && args.Command != "" {
		if args.Target != "" && args.Target != "server" {
			return "$ " + args.Command + "  (on " + args.Target + ")"
		}
		return "$ " + args.Command
	}
	return compactJSON(raw)
}

func headLines(s string, n int) []string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return nil
	}
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		more := len(lines) - n
		lines = append(lines[:n], fmt.Sprintf("… %d more line(s)", more))
	}
	return lines
}
