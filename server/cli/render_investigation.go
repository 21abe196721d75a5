package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/spf13/cobra"
)

// Investigations in the terminal: the evidence pack as one folded line
// (its sources and what failed; --json shows it whole) and the finding as
// a block.

type evidenceData struct {
	Items []struct {
		ID     string `json:"id"`
		Source string `json:"source"`
		Title  string `json:"title"`
	} `json:"items"`
	Failed []struct {
		Source string `json:"source"`
		Reason string `json:"reason"`
	} `json:"failed"`
	Tokens int `json:"tokens"`
}

type findingData struct {
	ID         string `json:"id"`
	Status     string `json:"status"`
	Summary    string `json:"summary"`
	Hypotheses []struct {
		Cause      string `json:"cause"`
		Confidence string `json:"confidence"`
		Evidence   []struct {
			Ref string `json:"ref"`
		} `json:"evidence"`
	} `json:"hypotheses"`
	Impact    string `json:"impact"`
	NextSteps []struct {
		Action        string `json:"action"`
		Command       string `json:"command"`
		Target        string `json:"target"`
		NeedsApproval bool   `json:"needs_approval"`
		ApprovalID    string `json:"approval_id"`
	} `json:"next_steps"`
	DroppedRefs       []string `json:"dropped_refs"`
	UnresolvedTargets []string `json:"unresolved_targets"`
	FinalText         string   `json:"final_text"`
	PromptVersion     string   `json:"prompt_version"`
}

// investigation renders an evidence or finding event of a session.
func (r *renderer) investigation(typ string, data json.RawMessage) {
	switch typ {
	case "evidence":
		var d evidenceData
		if json.Unmarshal(data, &d) != nil {
			return
		}
		bySource := map[string]int{}
		var order []string
		for _, it := range d.Items {
			if bySource[it.Source] == 0 {
				order = append(order, it.Source)
			}
			bySource[it.Source]++
		}
		parts := make([]string, len(order))
		for i, s := range order {
			parts[i] = fmt.Sprintf("%s %d", s, bySource[s])
		}
		line := fmt.Sprintf("▸ evidence: %d items (%s), about %d tokens", len(d.Items), strings.Join(parts, ", "), d.Tokens)
		for _, f := range d.Failed {
			line += fmt.Sprintf("; %s failed: %s", f.Source, f.Reason)
		}
		fmt.Fprintln(r.w, r.o.paint(dim, line))
	case "finding":
		var d findingData
		if json.Unmarshal(data, &d) == nil {
			writeFinding(r.w, r.o, &d)
		}
	}
}

// printFinding is incidents show's finding block.
func (a *app) printFinding(f *findingData) { writeFinding(a.inv.Stdout, a.out, f) }

func writeFinding(w io.Writer, o *output, f *findingData) {
	if f.Status == "no_finding" {
		fmt.Fprintf(w, "%s the investigation ended without one\n", o.paint(yellow, "no finding:"))
		if t := strings.TrimSpace(f.FinalText); t != "" {
			fmt.Fprintf(w, "  %s\n", clip(t, 500))
		}
		return
	}
	fmt.Fprintf(w, "%s %s\n", o.paint(bold, "finding:"), f.Summary)
	for _, h := range f.Hypotheses {
		refs := make([]string, len(h.Evidence))
		for i, e := range h.Evidence {
			refs[i] = e.Ref
		}
		fmt.Fprintf(w, "  [%s] %s %s\n", h.Confidence, h.Cause, o.paint(dim, "("+strings.Join(refs, ", ")+")"))
	}
	if f.Impact != "" {
		fmt.Fprintf(w, "  impact: %s\n", f.Impact)
	}
	for i, s := range f.NextSteps {
		line := fmt.Sprintf("  next %d: %s", i, s.Action)
		if s.Command != "" {
			line += fmt.Sprintf(" — %s on %s", s.Command, s.Target)
		}
		if s.NeedsApproval {
			line += " (needs approval)"
		}
		if s.ApprovalID != "" {
			line += " approval " + s.ApprovalID
		}
		fmt.Fprintln(w, line)
	}
	if len(f.DroppedRefs) > 0 {
		fmt.Fprintf(w, "  %s %s\n", o.paint(dim, "dropped references:"), strings.Join(f.DroppedRefs, ", "))
	}
	if len(f.UnresolvedTargets) > 0 {
		fmt.Fprintf(w, "  %s %s\n", o.paint(dim, "unresolved targets:"), strings.Join(f.UnresolvedTargets, ", "))
	}
}

// incidentInvestigateCmd starts an investigation (evidence pack, method,
// a finding at the end) and prints its session.
func (a *app) incidentInvestigateCmd() *cobra.Command {
	var b struct {
		Message   string `json:"message,omitempty"`
		AgentType string `json:"agent_type,omitempty"`
	}
	cmd := &cobra.Command{Use: "investigate ID", Short: "Investigate an incident: gather its evidence, then the agent reports a finding", Args: exactArgs(1, "ID"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := a.projectClient(cmd.Context())
			if err != nil {
				return err
			}
			var out struct {
				SessionID string `json:"session_id"`
			}
			var raw json.RawMessage
			if err := c.call(cmd.Context(), "POST", "/api/incidents/"+url.PathEscape(args[0])+"/investigate", nil, b, &out, &raw); err != nil {
				return err
			}
			return a.emit(raw, []string{out.SessionID}, func() {
				a.out.fields([][2]string{{"session", out.SessionID}, {"follow", "opsagent sessions show " + out.SessionID}})
			})
		}}
	cmd.Flags().StringVar(&b.Message, "message", "", "added to the investigation's prompt")
	cmd.Flags().StringVar(&b.AgentType, "agent-type", "", "sre (default), kubernetes, database, ...")
	return cmd
}
