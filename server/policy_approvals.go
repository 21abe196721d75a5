package server

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/tools"
	"github.com/opsagent/opsagent/store"
)

// Approvals of tool calls use the generic approvals records (approvals.go)
// with kind tool_call. The subject is exactly what will run; approving
// re-checks the rules inside the decision's transaction; and the call runs
// only when guardedTool finds an approved, unused approval of the same
// session for byte-identical arguments, decided within toolApprovalUseWindow.

// Tool-call approvals expire after toolApprovalTTL undecided; an approval
// must be used within toolApprovalUseWindow of its decision.
const (
	toolApprovalTTL       = time.Hour
	toolApprovalUseWindow = 15 * time.Minute
)

// ToolCallSubject is the subject of a tool_call approval: what will run.
type ToolCallSubject struct {
	Tool       string          `json:"tool"`
	CallID     string          `json:"call_id"`
	Target     string          `json:"target"`
	Command    string          `json:"command"`
	Arguments  json.RawMessage `json:"arguments"`
	ArgsSHA256 string          `json:"args_sha256"`
	RuleIDs    []string        `json:"rule_ids"`
	// For run_command: what the line was parsed as, its effect categories
	// and the parts that could not be proven.
	Parsed  string   `json:"parsed,omitempty"`
	Effects []string `json:"effects,omitempty"`
	Opaque  []string `json:"opaque,omitempty"`
}

// callHash binds a tool name to its exact arguments, in canonical form.
func callHash(tool string, args json.RawMessage) string {
	h := sha256.New()
	h.Write([]byte(tool))
	h.Write([]byte{0})
	h.Write(canonicalArgs(args))
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalArgs is one spelling of a JSON value: the arguments a paused
// run is approved for travel through the stored transcript, whose JSON
// encoding compacts them and escapes <, > and &, before the resumed run
// executes them. Every value the tool would read is kept (strings and
// numbers verbatim, keys sorted, a repeated key as its last value, which
// is what the tool's decoder keeps too); arguments that are not JSON are
// hashed as they are.
func canonicalArgs(args json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil || dec.More() {
		return args
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return args
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// installToolApprovals registers the tool_call kind with the approvals.
func (s *Server) installToolApprovals() {
	s.SetApprovalHandler(store.ApprovalToolCall, s.approveToolCall)
}

// openToolApproval records the approval a paused run waits for.
func (s *Server) openToolApproval(ctx context.Context, run runner.RunInfo, p *agent.Pending) (string, error) {
	t := s.policyToolByName(ctx, run, p.Call.Name)
	if t == nil {
		t = agent.FuncTool{IsReadOnly: p.Call.ReadOnly}
	}
	d, err := s.evaluateCall(ctx, run, t, p.Call.Name, p.Call.Arguments)
	if err != nil {
		return "", err
	}
	subj := ToolCallSubject{Tool: p.Call.Name, CallID: p.Call.ID, Target: d.view.Rendered.Target, Command: d.view.Rendered.Command,
		Arguments: p.Call.Arguments, ArgsSHA256: callHash(p.Call.Name, p.Call.Arguments), RuleIDs: d.ruleIDs}
	if subj.RuleIDs == nil {
		subj.RuleIDs = []string{}
	}
	if sc := d.view.Scan; sc != nil {
		subj.Parsed, subj.Effects, subj.Opaque = sc.a.Summary(), sc.effectNames(), sc.opaqueReasons()
	}
	b, err := json.Marshal(subj)
	if err != nil {
		return "", err
	}
	title := p.Call.Name
	if subj.Target != "" {
		title += " on " + subj.Target
	}
	title += ": " + truncateText(oneLineText(subj.Command), 160)
	a := &store.Approval{OrgID: run.OrgID, ProjectID: run.ProjectID, Kind: store.ApprovalToolCall, SessionID: run.SessionID,
		Subject: string(b), Title: title, Reason: p.Reason, ExpiresAt: s.Now().Add(toolApprovalTTL)}
	if len(d.ruleIDs) > 0 {
		a.RuleID = d.ruleIDs[0]
	}
	if err := s.db.CreateApproval(ctx, a); err != nil {
		return "", err
	}
	s.audit(ctx, AuditEvent{Action: "approval.requested", Outcome: "success", OrgID: run.OrgID, ProjectID: run.ProjectID,
		ActorUserID: run.UserID, TargetType: "approval", TargetID: a.ID, Detail: map[string]any{"tool": p.Call.Name, "session_id": run.SessionID}})
	s.approvalOpenedInChat(run, a.ID)
	return a.ID, nil
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "…"
}

// approveToolCall is the tool_call kind's handler, run inside the decision's
// transaction: a call the rules now block cannot be approved (409).
func (s *Server) approveToolCall(ctx context.Context, a *store.Approval) (string, error) {
	var subj ToolCallSubject
	if err := json.Unmarshal([]byte(a.Subject), &subj); err != nil {
		return "", err
	}
	run := runner.RunInfo{OrgID: a.OrgID, ProjectID: a.ProjectID, SessionID: a.SessionID}
	t := s.policyToolByName(ctx, run, subj.Tool)
	if t == nil {
		t = agent.FuncTool{}
	}
	d, err := s.evaluateCall(ctx, run, t, subj.Tool, subj.Arguments)
	if err != nil {
		return "", err
	}
	if d.verdict.Verdict == agent.VerdictBlock {
		return "", &store.Error{Code: store.EConflict, Message: "the rules now refuse this call: " + d.verdict.Reason, Reason: "approval_blocked_by_rule"}
	}
	return `{"executed_at":null}`, nil
}

// consumeToolApproval is guardedTool's proof of approval: single use,
// byte-identical arguments, same session, decided recently. It returns the
// approval's id, "" when there is none.
func (s *Server) consumeToolApproval(ctx context.Context, run runner.RunInfo, tool string, args json.RawMessage) (string, error) {
	id, err := s.db.ConsumeToolApproval(ctx, run.OrgID, run.ProjectID, run.SessionID, callHash(tool, args), s.Now().Add(-toolApprovalUseWindow))
	if err != nil || id == "" {
		return "", err
	}
	s.audit(ctx, AuditEvent{Action: "approval.executed", Outcome: "success", OrgID: run.OrgID, ProjectID: run.ProjectID,
		TargetType: "approval", TargetID: id, Detail: map[string]any{"tool": tool, "session_id": run.SessionID}})
	s.recordApprovedAction(ctx, run.OrgID, run.ProjectID, id) // changes.go: the feed shows what the agent changed
	return id, nil
}

// toolCallDecided continues the waiting session with the decision.
func (s *Server) toolCallDecided(ctx context.Context, a *store.Approval) {
	defer s.approvalDecidedInChat(a) // after the resume: the chat follows the continued turn
	s.nextStepDecided(ctx, a)        // findings.go: an approved next step of a finding runs once
	if a.Kind != store.ApprovalToolCall || a.SessionID == "" {
		return // no session waits on a call made through POST /api/commands
	}
	var subj ToolCallSubject
	if err := json.Unmarshal([]byte(a.Subject), &subj); err != nil {
		return
	}
	run := runner.RunInfo{OrgID: a.OrgID, ProjectID: a.ProjectID, SessionID: a.SessionID, UserID: a.DecidedBy}
	dec := agent.Approval{CallID: subj.CallID, Approved: a.Status == store.ApprovalApproved, Reason: a.Comment}
	if a.Status == store.ApprovalExpired {
		dec.Reason = expiredReason
	}
	if err := s.runner.Resume(ctx, run, dec); err != nil {
		s.log.Warn("policy: session not resumed after a decision", "approval_id", a.ID, "session_id", a.SessionID, "err", err)
	}
}

// expiredReason is what a session waiting on an approval nobody decided in
// time is told.
const expiredReason = "not approved in time: the approval expired undecided, so the call did not run"

// ExpireApprovals is the approval-expiry job: pending approvals past their
// expiry become expired, and the sessions waiting on expired tool calls
// continue, told the call did not run. (Deciding an expired approval is a
// conflict whether or not this has run yet.)
func (s *Server) ExpireApprovals(ctx context.Context) error {
	expired, err := s.db.ExpireToolApprovals(ctx)
	for i := range expired {
		a := &expired[i]
		s.audit(ctx, AuditEvent{Action: "approval.expired", Outcome: "success", OrgID: a.OrgID, ProjectID: a.ProjectID,
			TargetType: "approval", TargetID: a.ID, Detail: map[string]any{"kind": a.Kind, "session_id": a.SessionID}})
		s.toolCallDecided(ctx, a)
	}
	if err != nil {
		return err
	}
	since := s.Now()
	_, err = s.db.ExpireApprovals(ctx)
	s.expiredInChat(ctx, since)
	return err
}

// ApprovalRememberOut is an approval approved with the rule it added.
type ApprovalRememberOut struct {
	Approval ApprovalOut `json:"approval"`
	Rule     RuleOut     `json:"rule" doc:"a must_always allow rule for exactly this command"`
}

// approvalRememberRoutes: approve and remember.
func (s *Server) approvalRememberRoutes() []*Route {
	return []*Route{
		{Method: "POST", Path: "/api/approvals/{approval_id}/approve-and-remember", Summary: "Approve a tool call and add a rule that pre-approves exactly this command from now on", Tags: []string{"approvals"}, Auth: AuthAny, Perm: PermRulesWrite, Project: true, Body: ApprovalDecision{}, Resp: ApprovalRememberOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handleApproveAndRemember},
	}
}

// handleApproveAndRemember is POST /api/approvals/{approval_id}/approve-and-remember.
func (s *Server) handleApproveAndRemember(c *Ctx) error {
	id, err := c.IDParam("approval_id")
	if err != nil {
		return err
	}
	var req ApprovalDecision
	if err := c.Bind(&req); err != nil {
		return err
	}
	a, rule, err := s.db.ApproveRemembering(c.Context(), c.OrgID(), c.ProjectID(), id, c.ID.UserID, req.Comment,
		func(a *store.Approval) (*store.Rule, error) {
			if a.Kind != store.ApprovalToolCall {
				return nil, &store.Error{Code: store.EConflict, Message: "only tool calls can be remembered", Reason: "approval_not_rememberable"}
			}
			var subj ToolCallSubject
			if err := json.Unmarshal([]byte(a.Subject), &subj); err != nil {
				return nil, err
			}
			rule := &store.Rule{OrgID: a.OrgID, ProjectID: a.ProjectID, Kind: store.RuleMustAlways, Effect: store.EffectAllow,
				Description: fmt.Sprintf("Pre-approved by a person (approval %s): %s", a.ID, truncateText(subj.Command, 300)),
				Tool:        subj.Tool, MatchType: store.MatchGlob, Pattern: globEscape(subj.Command), Enabled: true,
				SourceApprovalID: a.ID, CreatedBy: c.ID.UserID}
			cr, err := compileRule(rule)
			if err != nil {
				return nil, err
			}
			if !cr.matches(callView{Tool: subj.Tool, Rendered: toolRendered(subj)}) {
				return nil, &store.Error{Code: store.EConflict, Message: "this command chains or redirects shell commands, so no rule can pre-approve it; approve it once instead", Reason: "approval_not_rememberable"}
			}
			return rule, nil
		}, s.approveToolCall)
	if err != nil {
		return err
	}
	c.Audit("approval.approved", "success", "approval", id, map[string]any{"kind": a.Kind, "remembered_rule_id": rule.ID})
	c.Audit("rule.created", "success", "rule", rule.ID, map[string]any{"kind": rule.Kind, "effect": rule.Effect, "source_approval_id": id})
	s.toolCallDecided(c.Context(), a)
	return c.JSON(200, ApprovalRememberOut{Approval: approvalOut(a), Rule: ruleOut(rule)})
}

func toolRendered(subj ToolCallSubject) tools.Rendered {
	return tools.Rendered{Target: subj.Target, Command: subj.Command}
}
