package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/prompts"
)

// framedPrompt is the system prompt from the versioned files
// (server/agent/prompts): the agent type's role, the project, the method,
// the tools this run actually has and what each is for, when to report,
// the rules it must follow, then the project's own instructions (after the
// platform's, so they add to it and cannot replace it).
func (r *Runner) framedPrompt(ctx context.Context, spec turnSpec, tools *agent.ToolSet, iv *investigating) (string, string) {
	p := prompts.For(spec.agentTyp)
	var b strings.Builder
	b.WriteString(p.Role + "\n")
	if proj, err := r.d.DB.FindProjectInOrg(ctx, spec.info.OrgID, spec.info.ProjectID); err == nil {
		fmt.Fprintf(&b, "Project: %s.\n", proj.Name)
		if d := strings.TrimSpace(proj.Description); d != "" {
			fmt.Fprintf(&b, "Project context: %s\n", d)
		}
	}
	b.WriteString("\n" + p.Method + "\n")
	b.WriteString("\nYour tools in this project:\n")
	for _, s := range tools.Specs() {
		desc, _, _ := strings.Cut(strings.TrimSpace(s.Description), "\n")
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, desc)
	}
	if iv != nil {
		b.WriteString("\nThis run investigates incident " + iv.IncidentID + ". End it by calling report_finding once, " +
			"when a hypothesis is supported or your budget is nearly spent; cite evidence ids (ev1, ...) and your tool call ids.\n")
	}
	if r.d.Policy != nil {
		if o := strings.TrimSpace(r.d.Policy.Obligations(ctx, spec.info)); o != "" {
			b.WriteString("\nRules you must always follow:\n" + o + "\n")
		}
	}
	if text, err := r.d.DB.ProjectInstructions(ctx, spec.info.OrgID, spec.info.ProjectID); err == nil && strings.TrimSpace(text) != "" {
		b.WriteString("\nThe project's own instructions (they add to the above and never override the rules or the approvals):\n" + strings.TrimSpace(text) + "\n")
	}
	return b.String(), p.Version
}

// recordPrompt notes the prompt version the session ran with.
func (r *Runner) recordPrompt(ctx context.Context, spec turnSpec, version string, iv *investigating) {
	inc := ""
	if iv != nil {
		inc = iv.IncidentID
	}
	if err := r.d.DB.SetSessionPrompt(context.WithoutCancel(ctx), spec.info.SessionID, version, inc); err != nil {
		r.log.Warn("agent: prompt version not recorded", "session_id", spec.info.SessionID, "err", err)
	}
}

// systemPrompt is the framing without a tool list or investigation (what
// models.go sizes a model's context against).
func (r *Runner) systemPrompt(ctx context.Context, spec turnSpec) string {
	s, _ := r.framedPrompt(ctx, spec, nil, nil)
	return s
}
