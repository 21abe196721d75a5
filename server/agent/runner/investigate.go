package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/llm"
	"github.com/opsagent/opsagent/server/investigate"
)

// Investigator is the seam to the investigation engine (issue 36): the
// server knows which incident a session investigates, gathers its evidence
// pack (server/investigate) and stores findings. The runner calls it before
// the first model call of a run and after each turn; nil: no investigations.
type Investigator interface {
	// Begin returns the investigation this run is part of, nil when it
	// investigates nothing. first is the run's first turn (the pack is
	// gathered then and added to the first user message).
	Begin(ctx context.Context, info RunInfo, first bool) *Investigation
}

// Investigation is one run's part of an incident's investigation.
type Investigation struct {
	IncidentID string
	// Evidence is the pack as the model reads it, fenced and masked
	// ("" when none was gathered); EvidenceEvent is the evidence event's
	// payload (the pack).
	Evidence      string
	EvidenceEvent any
	EvidenceIDs   []string
	Targets       []string // the project's targets, for next steps
	// Record stores a checked finding; NoFinding records that the run
	// ended without one (unless the session has one), keeping finalText.
	Record    func(ctx context.Context, r *investigate.Report, model string) error
	NoFinding func(ctx context.Context, finalText, model, why string)
}

// maxFindingCorrections is how many invalid reports the model is told to
// correct before the run records "no finding".
const maxFindingCorrections = 2

// investigating is an Investigation during one turn: the tool calls seen
// so far (references may cite them) and the report_finding tool's state.
type investigating struct {
	*Investigation
	model string

	mu       sync.Mutex
	calls    []string
	bad      int
	reported bool
	gaveUp   bool
}

// beginInvestigation asks the Investigator about this turn; on the first
// turn it adds the evidence to the first user message and publishes the
// evidence event, before any model call.
func (r *Runner) beginInvestigation(ctx context.Context, spec *turnSpec, hub *hub) *investigating {
	if r.d.Investigator == nil {
		return nil
	}
	first := spec.turn == 1 && spec.approval == nil && len(spec.history) == 1 && spec.history[0].Role == llm.RoleUser
	inv := r.d.Investigator.Begin(ctx, spec.info, first)
	if inv == nil {
		return nil
	}
	iv := &investigating{Investigation: inv}
	for _, m := range spec.history {
		for _, c := range m.ToolCalls {
			iv.calls = append(iv.calls, c.ID)
		}
	}
	if first && inv.Evidence != "" {
		h := append([]llm.Message(nil), spec.history...)
		h[0].Content += "\n\n" + inv.Evidence
		spec.history = h
	}
	if first && inv.EvidenceEvent != nil {
		hub.publish(EventEvidence, inv.EvidenceEvent, r.d.Now())
	}
	return iv
}

// EventEvidence carries a run's evidence pack; EventFinding the finding.
const (
	EventEvidence = "evidence"
	EventFinding  = "finding"
)

// sawCall notes a tool call the model made (emit's tool_call events).
func (iv *investigating) sawCall(e agent.Event) {
	if iv == nil {
		return
	}
	if c, ok := e.Data.(agent.ToolCallEvent); ok {
		iv.mu.Lock()
		iv.calls = append(iv.calls, c.CallID)
		iv.mu.Unlock()
	}
}

// tool is report_finding.
func (iv *investigating) tool() agent.Tool {
	return agent.FuncTool{IsReadOnly: true,
		Definition: llm.ToolSpec{Name: "report_finding", Description: investigate.ToolDescription, Parameters: json.RawMessage(investigate.ToolSpec)},
		Fn:         iv.report}
}

func (iv *investigating) report(ctx context.Context, args json.RawMessage) (string, error) {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	switch {
	case iv.reported:
		return "", errors.New("the finding is already recorded; end your answer")
	case iv.gaveUp:
		return "", errors.New("no finding is recorded for this run after invalid reports; end your answer")
	}
	rep, err := investigate.ParseFinding(args, investigate.Checks{EvidenceIDs: iv.EvidenceIDs, CallIDs: append([]string(nil), iv.calls...), Targets: iv.Targets})
	var fe *investigate.FindingError
	if errors.As(err, &fe) {
		iv.bad++
		if iv.bad > maxFindingCorrections {
			iv.gaveUp = true
			iv.NoFinding(context.WithoutCancel(ctx), "", iv.model, fmt.Sprintf("report_finding was invalid %d times: %s", iv.bad, strings.Join(fe.Problems, "; ")))
			return "", errors.New("no finding is recorded: the report was invalid three times (" + strings.Join(fe.Problems, "; ") + "). End your answer in plain text")
		}
		return "", err
	}
	if err != nil {
		return "", err
	}
	if err := iv.Record(context.WithoutCancel(ctx), rep, iv.model); err != nil {
		return "", fmt.Errorf("the finding could not be stored: %v", err)
	}
	iv.reported = true
	return rep.Ack(), nil
}

// end records "no finding" for a turn that ended (not paused for an
// approval) without one, keeping the model's final text.
func (iv *investigating) end(ctx context.Context, res *turnResult) {
	if iv == nil || res.status == agent.StatusWaitingApproval {
		return
	}
	iv.mu.Lock()
	done := iv.reported || iv.gaveUp
	iv.mu.Unlock()
	if done {
		return
	}
	final := ""
	for i := len(res.messages) - 1; i >= 0; i-- {
		if m := res.messages[i]; m.Role == llm.RoleAssistant && strings.TrimSpace(m.Content) != "" {
			final = m.Content
			break
		}
	}
	iv.NoFinding(context.WithoutCancel(ctx), final, res.model, "the model ended without calling report_finding ("+string(res.status)+")")
}

// Publish adds an event to a session's live turn (a finding recorded
// while it runs); nothing when the session has none.
func (r *Runner) Publish(sessionID, typ string, data any) {
	if h := r.hub(sessionID); h != nil {
		h.publish(typ, data, r.d.Now())
	}
}
