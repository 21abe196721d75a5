package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/store"
)

// What-if for rules: POST /api/rules/preview replays the project's
// recorded tool calls through the rules as they are and as proposed, with
// the policy engine the gate uses (evaluateCallWith: rules, command
// policy, shell analysis), and lists the calls whose verdict changes.

// Preview limits.
const (
	previewMaxCalls   = 5000 // recorded calls replayed per preview
	previewMaxChanges = 500  // changed calls listed (the summary counts all)
)

// RulePreviewIn is a proposed change to the project's rules.
type RulePreviewIn struct {
	Days   int          `json:"days" validate:"gte=0,lte=90" doc:"replay the calls of the last N days (1 to 90, default 7)"`
	Add    []RuleCreate `json:"add" doc:"rules to add to the project"`
	Remove []string     `json:"remove" doc:"ids of project rules to take away"`
}

// RuleChangeOut is one recorded call whose verdict would change.
type RuleChangeOut struct {
	SessionID string    `json:"session_id"`
	Seq       int64     `json:"seq" doc:"the call's event number in the session"`
	At        time.Time `json:"at"`
	Tool      string    `json:"tool"`
	Command   string    `json:"command" doc:"the rendered call"`
	Change    string    `json:"change" doc:"newly_blocked, newly_needing_approval or newly_allowed"`
	Before    string    `json:"before" doc:"verdict under the current rules"`
	After     string    `json:"after" doc:"verdict under the proposed rules"`
	RuleIDs   []string  `json:"rule_ids" doc:"the rules that decide it under the proposal ('proposed:N' for the Nth added rule)"`
	Reason    string    `json:"reason"`
}

// RulePreviewOut is what the proposal would change.
type RulePreviewOut struct {
	Days                 int             `json:"days"`
	CallsReplayed        int             `json:"calls_replayed"`
	Truncated            bool            `json:"truncated" doc:"more calls were recorded than one preview replays: the newest are replayed, from replayed_from on"`
	Since                time.Time       `json:"since" doc:"start of the requested window (now minus days)"`
	ReplayedFrom         *time.Time      `json:"replayed_from" doc:"time of the oldest call replayed (null when none was); later than since when truncated"`
	ReplayedTo           *time.Time      `json:"replayed_to" doc:"time of the newest call replayed (null when none was)"`
	NewlyBlocked         int             `json:"newly_blocked"`
	NewlyNeedingApproval int             `json:"newly_needing_approval"`
	NewlyAllowed         int             `json:"newly_allowed"`
	Unchanged            int             `json:"unchanged"`
	Changes              []RuleChangeOut `json:"changes"`
}

// handlePreviewRules is POST /api/rules/preview.
func (s *Server) handlePreviewRules(c *Ctx) error {
	if ok, retry := s.bx().previews.Allow(c.OrgID()); !ok {
		return &RateLimitError{RetryAfter: retry}
	}
	var req RulePreviewIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	if req.Days == 0 {
		req.Days = 7
	}
	if len(req.Add) > 50 || len(req.Remove) > store.MaxRulesPerScope {
		return invalid("at most 50 rules to add", "value_error", "body", "add")
	}
	ctx := c.Context()
	current, err := s.db.FindRulesForProject(ctx, c.OrgID(), c.ProjectID(), true)
	if err != nil {
		return err
	}
	remove := map[string]bool{}
	for i, id := range req.Remove {
		found := false
		for _, r := range current {
			found = found || (r.ID == id && r.ProjectID != "")
		}
		if !found {
			return invalid("no rule of this project with this id", "value_error", "body", "remove", i)
		}
		remove[id] = true
	}
	var proposed []store.Rule
	for _, r := range current {
		if !remove[r.ID] {
			proposed = append(proposed, r)
		}
	}
	for i, a := range req.Add {
		r := store.Rule{ID: "proposed:" + itoa(i+1), OrgID: c.OrgID(), ProjectID: c.ProjectID(), Kind: a.Kind, Effect: a.Effect,
			Description: a.Description, Tool: a.Tool, MatchType: a.MatchType, Pattern: a.Pattern, Enabled: a.Enabled == nil || *a.Enabled, AllowOpaque: a.AllowOpaque}
		if r.Effect == "" {
			r.Effect = defaultEffect(&r)
		}
		if _, err := compileRule(&r); err != nil {
			if ve, ok := err.(*ValidationError); ok {
				for j := range ve.Errors {
					ve.Errors[j].Loc = append([]any{"body", "add", i}, ve.Errors[j].Loc[1:]...)
				}
			}
			return err
		}
		if r.Enabled {
			proposed = append(proposed, r)
		}
	}
	since := s.Now().AddDate(0, 0, -req.Days).UTC()
	calls, more, err := s.db.FindRecordedCalls(ctx, c.OrgID(), c.ProjectID(), since, previewMaxCalls)
	if err != nil {
		return err
	}
	out := RulePreviewOut{Days: req.Days, CallsReplayed: len(calls), Truncated: more, Since: since, Changes: []RuleChangeOut{}}
	if len(calls) > 0 {
		out.ReplayedFrom, out.ReplayedTo = &calls[0].At, &calls[len(calls)-1].At
	}
	run := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID()}
	tools := map[string]agent.Tool{}
	for _, rc := range calls {
		var call agent.ToolCallEvent
		if json.Unmarshal([]byte(rc.Data), &call) != nil || call.Name == "" {
			continue
		}
		if len(call.Arguments) == 0 {
			call.Arguments = json.RawMessage("{}")
		}
		t := s.replayTool(ctx, run, tools, call.Name)
		before, err := s.evaluateCallWith(ctx, run, t, call.Name, call.Arguments, current)
		if err != nil {
			return err
		}
		after, err := s.evaluateCallWith(ctx, run, t, call.Name, call.Arguments, proposed)
		if err != nil {
			return err
		}
		b, a := string(before.verdict.Verdict), string(after.verdict.Verdict)
		change := ""
		switch {
		case b == a:
			out.Unchanged++
		case a == string(agent.VerdictBlock):
			change = "newly_blocked"
			out.NewlyBlocked++
		case a == string(agent.VerdictNeedApproval):
			change = "newly_needing_approval"
			out.NewlyNeedingApproval++
		default:
			change = "newly_allowed"
			out.NewlyAllowed++
		}
		if change != "" && len(out.Changes) < previewMaxChanges {
			ids := after.ruleIDs
			if ids == nil {
				ids = []string{}
			}
			out.Changes = append(out.Changes, RuleChangeOut{SessionID: rc.SessionID, Seq: rc.Seq, At: rc.At, Tool: call.Name,
				Command: after.view.Rendered.Command, Change: change, Before: b, After: a, RuleIDs: ids, Reason: after.verdict.Reason})
		}
	}
	return c.JSON(200, out)
}

// replayTool is the project's tool of that name as the gate would find it;
// a tool the policy does not know (the runner's own) is judged as the gate
// judges it, by the rules alone.
func (s *Server) replayTool(ctx context.Context, run runner.RunInfo, cache map[string]agent.Tool, name string) agent.Tool {
	if t, ok := cache[name]; ok {
		return t
	}
	// The runner's own tools: search_knowledge and recall read; remember writes.
	var t agent.Tool = agent.FuncTool{IsReadOnly: name == "search_knowledge" || name == "recall"}
	if pt := s.policyToolByName(ctx, run, name); pt != nil {
		t = pt
	}
	cache[name] = t
	return t
}
