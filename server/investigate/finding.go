package investigate

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
)

// A finding is how an investigation ends: the model calls report_finding
// with a summary, hypotheses with their evidence, the impact and the next
// steps. The platform checks it (ParseFinding) before it is stored.

// Confidences of a hypothesis.
var Confidences = []string{"low", "medium", "high"}

// Ref is one piece of evidence a hypothesis cites.
type Ref struct {
	Ref      string `json:"ref" doc:"an evidence item id (ev3) or a tool call id of the session"`
	Kind     string `json:"kind" doc:"evidence or tool_call"`
	Resolved bool   `json:"resolved"`
}

// Hypothesis is one candidate root cause.
type Hypothesis struct {
	Cause      string `json:"cause"`
	Confidence string `json:"confidence" doc:"low, medium or high"`
	Evidence   []Ref  `json:"evidence"`
}

// NextStep is one action, with the exact command and target where it is one.
type NextStep struct {
	Action        string `json:"action"`
	Command       string `json:"command"`
	Target        string `json:"target"`
	NeedsApproval bool   `json:"needs_approval"`
	ApprovalID    string `json:"approval_id" doc:"the approval requested for it (request-approval), empty before"`
	// Result is what running it after the approval gave (empty before).
	Result string `json:"result,omitempty"`
}

// Report is a checked finding, ready to store.
type Report struct {
	Summary           string       `json:"summary"`
	Hypotheses        []Hypothesis `json:"hypotheses"`
	Impact            string       `json:"impact"`
	NextSteps         []NextStep   `json:"next_steps"`
	DroppedRefs       []string     `json:"dropped_refs" doc:"references that named nothing, removed"`
	UnresolvedTargets []string     `json:"unresolved_targets" doc:"targets of next steps the project does not have (kept, marked)"`
}

// Checks is what a finding is checked against.
type Checks struct {
	EvidenceIDs []string // the pack's item ids
	CallIDs     []string // the session's tool call ids so far
	Targets     []string // the project's targets (connector names, "server")
}

// ToolSpec is report_finding's JSON Schema of parameters. It names the
// fields without requiring them or enumerating confidences: ParseFinding
// checks those, so every invalid report counts toward the corrections the
// model is allowed (a schema refusal would not reach it).
const ToolSpec = `{"type":"object","properties":{
"summary":{"type":"string","description":"what is happening, in two or three sentences (required)"},
"hypotheses":{"type":"array","description":"root-cause hypotheses, most likely first (at least one)","items":{"type":"object","properties":{
 "cause":{"type":"string"},"confidence":{"type":"string","description":"low, medium or high"},
 "evidence":{"type":"array","items":{"type":"string"},"description":"ids of evidence items (ev1, ev2, ...) or of your tool calls that support it"}}}},
"impact":{"type":"string","description":"who or what is affected, and how badly (required)"},
"next_steps":{"type":"array","items":{"type":"object","properties":{
 "action":{"type":"string"},"command":{"type":"string","description":"the exact command, when the step is one"},
 "target":{"type":"string","description":"the connector or host it runs on"},"needs_approval":{"type":"boolean"}}}}}}`

// ToolDescription tells the model when to call report_finding.
const ToolDescription = "Report the finding of this investigation, once, when a hypothesis is supported or your budget is nearly spent: " +
	"summary, hypotheses (each with confidence low, medium or high and the ids of the evidence items or tool calls that support it), " +
	"impact, and next steps (with the exact command and target, and whether it needs approval). The platform checks every reference."

var evidenceID = regexp.MustCompile(`^ev[0-9]+$`)

// FindingError is a finding the model must correct: its text says what.
type FindingError struct{ Problems []string }

func (e *FindingError) Error() string {
	return "the finding was not recorded: " + strings.Join(e.Problems, "; ") + ". Call report_finding again with these corrected."
}

// ParseFinding checks report_finding's arguments: missing fields and
// unknown confidences are a FindingError; references to nothing are
// dropped (and listed); targets the project does not have are kept and
// listed as unresolved.
func ParseFinding(args []byte, c Checks) (*Report, error) {
	var in struct {
		Summary    string `json:"summary"`
		Hypotheses []struct {
			Cause      string          `json:"cause"`
			Confidence string          `json:"confidence"`
			Evidence   json.RawMessage `json:"evidence"`
		} `json:"hypotheses"`
		Impact    string     `json:"impact"`
		NextSteps []NextStep `json:"next_steps"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, &FindingError{Problems: []string{"the arguments are not the finding's JSON object (" + err.Error() + ")"}}
	}
	var problems []string
	if strings.TrimSpace(in.Summary) == "" {
		problems = append(problems, "summary is missing")
	}
	if strings.TrimSpace(in.Impact) == "" {
		problems = append(problems, "impact is missing")
	}
	if len(in.Hypotheses) == 0 {
		problems = append(problems, "give at least one hypothesis")
	}
	evidence := set(c.EvidenceIDs)
	calls := set(c.CallIDs)
	targets := set(c.Targets)
	r := &Report{Summary: strings.TrimSpace(in.Summary), Impact: strings.TrimSpace(in.Impact), Hypotheses: []Hypothesis{},
		NextSteps: []NextStep{}, DroppedRefs: []string{}, UnresolvedTargets: []string{}}
	for i, h := range in.Hypotheses {
		if strings.TrimSpace(h.Cause) == "" {
			problems = append(problems, fmt.Sprintf("hypotheses[%d].cause is missing", i))
		}
		if !contains(Confidences, h.Confidence) {
			problems = append(problems, fmt.Sprintf("hypotheses[%d].confidence %q is not one of low, medium, high", i, h.Confidence))
		}
		var refs []string
		if len(h.Evidence) > 0 && string(h.Evidence) != "null" {
			if err := json.Unmarshal(h.Evidence, &refs); err != nil {
				problems = append(problems, fmt.Sprintf("hypotheses[%d].evidence must be a list of ids (strings)", i))
			}
		}
		hy := Hypothesis{Cause: strings.TrimSpace(h.Cause), Confidence: h.Confidence, Evidence: []Ref{}}
		for _, ref := range refs {
			ref = strings.TrimSpace(ref)
			switch {
			case evidenceID.MatchString(ref) && evidence[ref]:
				hy.Evidence = append(hy.Evidence, Ref{Ref: ref, Kind: "evidence", Resolved: true})
			case calls[ref]:
				hy.Evidence = append(hy.Evidence, Ref{Ref: ref, Kind: "tool_call", Resolved: true})
			default:
				r.DroppedRefs = append(r.DroppedRefs, ref)
			}
		}
		r.Hypotheses = append(r.Hypotheses, hy)
	}
	for i, s := range in.NextSteps {
		if strings.TrimSpace(s.Action) == "" {
			problems = append(problems, fmt.Sprintf("next_steps[%d].action is missing", i))
		}
		if s.Command != "" && s.Target == "" {
			problems = append(problems, fmt.Sprintf("next_steps[%d] has a command but no target", i))
		}
		s.ApprovalID, s.Result = "", ""
		if s.Target != "" && !targets[s.Target] && !strings.Contains(s.Target, "=") && !contains(r.UnresolvedTargets, s.Target) {
			r.UnresolvedTargets = append(r.UnresolvedTargets, s.Target)
		}
		r.NextSteps = append(r.NextSteps, s)
	}
	if len(problems) > 0 {
		return nil, &FindingError{Problems: problems}
	}
	return r, nil
}

// Ack is what the model is told once its finding is recorded.
func (r *Report) Ack() string {
	var b strings.Builder
	b.WriteString("Finding recorded.")
	if len(r.DroppedRefs) > 0 {
		b.WriteString(" These references named no evidence item and no tool call of this session, and were dropped: " + strings.Join(r.DroppedRefs, ", ") + ".")
	}
	if len(r.UnresolvedTargets) > 0 {
		b.WriteString(" These targets are not the project's and are marked unresolved: " + strings.Join(r.UnresolvedTargets, ", ") + ".")
	}
	b.WriteString(" Now end with a short answer; do not call report_finding again.")
	return b.String()
}

func set(xs []string) map[string]bool {
	m := make(map[string]bool, len(xs))
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}
