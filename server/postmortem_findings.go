package server

import (
	"context"
	"fmt"
	"strings"

	"github.com/opsagent/opsagent/server/postmortem"
	"github.com/opsagent/opsagent/store"
)

// investigationFacts adds to a postmortem's fact sheet what the
// investigations concluded (each finding: hypotheses with confidence,
// impact, next steps and what came of them) and the changes before the
// incident, so the draft can cite them.
func (s *Server) investigationFacts(ctx context.Context, inc *store.Incident, sheet *postmortem.Sheet) {
	fs, _, err := s.db.FindFindings(ctx, inc.OrgID, inc.ProjectID, inc.ID, 20, 0)
	if err != nil {
		s.log.Warn("postmortem: findings unreadable", "incident_id", inc.ID, "err", err)
	}
	for i := len(fs) - 1; i >= 0; i-- { // oldest first, as the sheet reads
		f := findingOut(&fs[i])
		ref := "finding:" + f.ID
		if f.Status == store.FindingNoFinding {
			sheet.Add(ref, f.CreatedAt, "finding", "the investigation ended without a finding; its last answer: "+f.FinalText)
			continue
		}
		var b strings.Builder
		b.WriteString(f.Summary)
		for _, h := range f.Hypotheses {
			fmt.Fprintf(&b, " Hypothesis (%s confidence): %s.", h.Confidence, h.Cause)
		}
		if f.Impact != "" {
			b.WriteString(" Impact: " + f.Impact + ".")
		}
		for _, n := range f.NextSteps {
			b.WriteString(" Next step: " + n.Action)
			if n.Command != "" {
				b.WriteString(" (" + n.Command + " on " + n.Target + ")")
			}
			if n.Result != "" {
				b.WriteString(", run after approval: " + n.Result)
			}
			b.WriteString(".")
		}
		sheet.Add(ref, f.CreatedAt, "finding", b.String())
	}
	cs, err := s.incidentChanges(ctx, inc)
	if err != nil {
		return
	}
	for _, c := range cs {
		sheet.Add("change:"+c.ID, c.OccurredAt, "change", fmt.Sprintf("%s %s by %s: %s", c.Source, c.Kind, firstNonEmptyStr(c.Author, "unknown"), c.Title))
	}
}
