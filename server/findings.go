package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/opsagent/opsagent/server/agent"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/server/investigate"
	"github.com/opsagent/opsagent/store"
)

// Findings: how an investigation ends (report_finding, or "no finding"),
// stored on the incident as a history, posted to the incident's chat, and
// each next step one action away from an approval.

// FindingOut is one finding of an incident.
type FindingOut struct {
	ID                string                   `json:"id"`
	IncidentID        string                   `json:"incident_id"`
	SessionID         string                   `json:"session_id"`
	Status            string                   `json:"status" doc:"reported, or no_finding when the run ended without one (final_text keeps its answer)"`
	Summary           string                   `json:"summary"`
	Hypotheses        []investigate.Hypothesis `json:"hypotheses"`
	Impact            string                   `json:"impact"`
	NextSteps         []investigate.NextStep   `json:"next_steps"`
	DroppedRefs       []string                 `json:"dropped_refs"`
	UnresolvedTargets []string                 `json:"unresolved_targets"`
	FinalText         string                   `json:"final_text"`
	Model             string                   `json:"model"`
	PromptVersion     string                   `json:"prompt_version"`
	CreatedAt         time.Time                `json:"created_at"`
}

// FindingPage is a page of findings, newest first.
type FindingPage struct {
	Items  []FindingOut `json:"items"`
	Total  int          `json:"total"`
	Limit  int          `json:"limit"`
	Offset int          `json:"offset"`
}

// FindingQuery pages findings.
type FindingQuery struct {
	Limit  int `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset int `query:"offset" default:"0" validate:"gte=0"`
}

// InvestigateRequest starts an investigation of an incident.
type InvestigateRequest struct {
	Message   string `json:"message" validate:"max=20000" doc:"added to the investigation's prompt"`
	AgentType string `json:"agent_type" validate:"max=40" doc:"default sre"`
}

// InvestigateOut names the session investigating.
type InvestigateOut struct {
	SessionID  string `json:"session_id"`
	IncidentID string `json:"incident_id"`
}

func findingOut(f *store.Finding) FindingOut {
	var r investigate.Report
	_ = json.Unmarshal([]byte(f.Body), &r)
	out := FindingOut{ID: f.ID, IncidentID: f.IncidentID, SessionID: f.SessionID, Status: f.Status, Summary: f.Summary,
		Hypotheses: r.Hypotheses, Impact: r.Impact, NextSteps: r.NextSteps, DroppedRefs: r.DroppedRefs, UnresolvedTargets: r.UnresolvedTargets,
		FinalText: f.FinalText, Model: f.Model, PromptVersion: f.PromptVersion, CreatedAt: f.CreatedAt}
	if out.Hypotheses == nil {
		out.Hypotheses = []investigate.Hypothesis{}
	}
	if out.NextSteps == nil {
		out.NextSteps = []investigate.NextStep{}
	}
	if out.DroppedRefs == nil {
		out.DroppedRefs = []string{}
	}
	if out.UnresolvedTargets == nil {
		out.UnresolvedTargets = []string{}
	}
	return out
}

func (s *Server) findingRoutes() []*Route {
	tags := []string{"incidents"}
	return []*Route{
		{Method: "GET", Path: "/api/incidents/{incident_id}/findings", Summary: "The incident's findings, newest first (each investigation adds one)",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Query: FindingQuery{}, Resp: FindingPage{}, Status: 200, MCP: true, Handle: s.handleListFindings},
		{Method: "GET", Path: "/api/incidents/{incident_id}/evidence", Summary: "The incident's evidence pack (gathered before the investigation's first model call)",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsRead, Project: true, Resp: investigate.Pack{}, Status: 200, MCP: true, Handle: s.handleGetEvidence},
		{Method: "POST", Path: "/api/incidents/{incident_id}/investigate", Summary: "Start an investigation of the incident (evidence pack, method prompt, a finding at the end)",
			Tags: tags, Auth: AuthAny, Perm: PermSessionsWrite, Project: true, Body: InvestigateRequest{}, Resp: InvestigateOut{}, Status: 202, MaxBody: 64 << 10, MCP: true, Handle: s.handleInvestigate},
		{Method: "POST", Path: "/api/incidents/{incident_id}/findings/{finding_id}/next-steps/{index}/request-approval",
			Summary: "Turn a finding's next step into an approval request (through the normal gate); once approved it runs once",
			Tags:    tags, Auth: AuthAny, Perm: PermTasksRun, Project: true, Resp: ApprovalOut{}, Status: 201, Handle: s.handleNextStepApproval},
	}
}

// handleListFindings is GET /api/incidents/{incident_id}/findings.
func (s *Server) handleListFindings(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	var q FindingQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if _, _, err := s.db.FindIncident(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	fs, total, err := s.db.FindFindings(c.Context(), c.OrgID(), c.ProjectID(), id, q.Limit, q.Offset)
	if err != nil {
		return err
	}
	page := FindingPage{Items: make([]FindingOut, 0, len(fs)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range fs {
		page.Items = append(page.Items, findingOut(&fs[i]))
	}
	return c.JSON(200, page)
}

// handleGetEvidence is GET /api/incidents/{incident_id}/evidence.
func (s *Server) handleGetEvidence(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	if _, _, err := s.db.FindIncident(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	js, err := s.db.LatestEvidence(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	var p investigate.Pack
	if err := json.Unmarshal([]byte(js), &p); err != nil {
		return err
	}
	return c.JSON(200, p)
}

// handleInvestigate is POST /api/incidents/{incident_id}/investigate: a
// chat session tied to the incident, so its first turn gets the pack.
func (s *Server) handleInvestigate(c *Ctx) error {
	id, err := c.IDParam("incident_id")
	if err != nil {
		return err
	}
	if err := s.allowAgentTurn(c); err != nil {
		return err
	}
	var req InvestigateRequest
	if err := c.Bind(&req); err != nil {
		return err
	}
	inc, _, err := s.db.FindIncident(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	typ := req.AgentType
	if typ == "" {
		typ = "sre"
	}
	prompt := investigationPrompt(inc, req.Message)
	sess := &store.AgentSession{OrgID: c.OrgID(), ProjectID: c.ProjectID(), Title: runner.TitleFrom("Investigate " + inc.Title),
		FirstPrompt: prompt, AgentType: typ, Source: store.SourceWebchat, TriggerSource: store.TriggerWeb, CreatedBy: c.ID.UserID}
	if err := s.db.StartChatSession(c.Context(), sess); err != nil {
		return err
	}
	info := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), UserID: c.ID.UserID, SessionID: sess.ID,
		Source: store.SourceWebchat, TriggerSource: store.TriggerWeb}
	if err := s.launchInvestigation(c.Context(), info, inc, prompt, typ); err != nil {
		return err
	}
	c.Audit("incident.investigated", "success", "incident", inc.ID, map[string]any{"session_id": sess.ID})
	return c.JSON(202, InvestigateOut{SessionID: sess.ID, IncidentID: inc.ID})
}

// investigationPrompt is the first prompt of an investigation of inc, with
// what the person asking added.
func investigationPrompt(inc *store.Incident, message string) string {
	prompt := "Investigate incident " + inc.ID + ": " + inc.Title + " (severity " + inc.Severity + ", " + inc.Status + ")."
	if m := strings.TrimSpace(message); m != "" {
		prompt += "\n\n" + m
	}
	return prompt
}

// launchInvestigation starts the first turn of a session created to
// investigate inc (from the console, the API, MCP or a chat channel).
func (s *Server) launchInvestigation(ctx context.Context, info runner.RunInfo, inc *store.Incident, prompt, typ string) error {
	// Tie the session to the incident before the turn starts: the runner
	// asks which incident it investigates before the first model call.
	if err := s.db.SetSessionPrompt(ctx, info.SessionID, "", inc.ID); err != nil {
		return err
	}
	return s.runner.Launch(info, prompt, typ)
}

// recordFinding stores a finding (or "no finding"), publishes it as the
// session's finding event and posts it to the incident's chat.
func (s *Server) recordFinding(ctx context.Context, info runner.RunInfo, inc *store.Incident, status string, r *investigate.Report, finalText, model string) error {
	version, _ := s.db.SessionPrompt(ctx, info.SessionID)
	f := &store.Finding{OrgID: inc.OrgID, ProjectID: inc.ProjectID, IncidentID: inc.ID, SessionID: info.SessionID, Status: status,
		FinalText: finalText, Model: model, PromptVersion: version}
	if r != nil {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		f.Summary, f.Body = r.Summary, string(b)
	}
	if err := s.db.AddFinding(ctx, f); err != nil {
		return err
	}
	out := findingOut(f)
	s.runner.Publish(info.SessionID, runner.EventFinding, out)
	s.findingToChat(info, inc, out)
	return nil
}

// findingToChat posts the finding as one message to the incident's chat:
// the chat thread the session belongs to, or the chat its run posts to.
func (s *Server) findingToChat(info runner.RunInfo, inc *store.Incident, f FindingOut) {
	if s.chans == nil {
		return
	}
	taskID := info.TaskID
	if taskID == "" {
		taskID = inc.TaskID
	}
	s.channelBackground(time.Minute, func(ctx context.Context) {
		// A session of a chat thread (an investigation asked for in chat)
		// answers there, where the person asked; a run posts to its chat.
		var rt *channelRT
		conv, thread := "", ""
		if t, err := s.db.FindChannelThreadBySession(ctx, info.SessionID); err == nil {
			if r, err := s.channelRuntimeByID(ctx, t.ChannelID); err == nil && r.ch.OrgID == inc.OrgID {
				rt, conv, thread = r, t.Conversation, t.Thread
			}
		}
		if rt == nil {
			if rt, conv = s.runTarget(ctx, inc.OrgID, inc.ProjectID, taskID, info.SessionID); rt == nil {
				return
			}
		}
		if !s.withinWindow(ctx, rt, conv) {
			return
		}
		if _, err := rt.client.Post(ctx, conv, thread, channels.Message{Text: findingText(inc, f)}); err != nil {
			s.log.Warn("channels: finding not posted", "incident_id", inc.ID, "err", err)
		}
	})
}

// findingText is the finding as one chat message.
func findingText(inc *store.Incident, f FindingOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Finding on incident %q\n", inc.Title)
	if f.Status == store.FindingNoFinding {
		b.WriteString("No finding: the investigation ended without reporting one.")
		if t := strings.TrimSpace(f.FinalText); t != "" {
			b.WriteString("\n" + truncateText(t, 1500))
		}
		return b.String()
	}
	b.WriteString(f.Summary + "\n")
	for _, h := range f.Hypotheses {
		refs := make([]string, 0, len(h.Evidence))
		for _, r := range h.Evidence {
			refs = append(refs, r.Ref)
		}
		fmt.Fprintf(&b, "• [%s] %s (evidence: %s)\n", h.Confidence, h.Cause, strings.Join(refs, ", "))
	}
	if f.Impact != "" {
		b.WriteString("Impact: " + f.Impact + "\n")
	}
	for i, n := range f.NextSteps {
		fmt.Fprintf(&b, "Next %d: %s", i+1, n.Action)
		if n.Command != "" {
			fmt.Fprintf(&b, " — `%s` on %s", n.Command, n.Target)
		}
		if n.NeedsApproval {
			b.WriteString(" (needs approval)")
		}
		b.WriteString("\n")
	}
	if len(f.DroppedRefs) > 0 {
		b.WriteString("Dropped references to nothing: " + strings.Join(f.DroppedRefs, ", ") + "\n")
	}
	return strings.TrimSpace(b.String())
}

// handleNextStepApproval is POST /api/incidents/{incident_id}/findings/{finding_id}/next-steps/{index}/request-approval.
func (s *Server) handleNextStepApproval(c *Ctx) error {
	incID, fid, err := c.IDParams("incident_id", "finding_id")
	if err != nil {
		return err
	}
	idx, err := strconv.Atoi(c.Param("index"))
	if err != nil || idx < 0 {
		return invalid("Input should be a valid integer of at least 0", "int_parsing", "path", "index")
	}
	ctx := c.Context()
	f, err := s.db.FindFinding(ctx, c.OrgID(), c.ProjectID(), incID, fid)
	if err != nil {
		return err
	}
	out := findingOut(f)
	if idx >= len(out.NextSteps) {
		return store.NotFound("next step")
	}
	step := out.NextSteps[idx]
	if step.Command == "" || step.Target == "" {
		return &store.Error{Code: store.EConflict, Message: "this next step has no command and target to run", Reason: "next_step_not_a_command"}
	}
	if step.ApprovalID != "" {
		return &store.Error{Code: store.EConflict, Message: "an approval was already requested for this next step: " + step.ApprovalID, Reason: "next_step_requested"}
	}
	args, _ := json.Marshal(map[string]any{"command": step.Command, "target": step.Target})
	run := runner.RunInfo{OrgID: c.OrgID(), ProjectID: c.ProjectID(), UserID: c.ID.UserID, Source: "api", TriggerSource: "manual"}
	call := agent.Call{ID: "finding_" + fid + "_" + strconv.Itoa(idx), Name: "run_command", Arguments: args}
	d := s.gateFor(run).Check(ctx, call)
	if d.Verdict == agent.VerdictBlock {
		return &store.Error{Code: store.EConflict, Message: "the rules refuse this command: " + d.Reason, Reason: "next_step_refused"}
	}
	reason := "next step " + strconv.Itoa(idx+1) + " of the finding on incident " + incID + ": " + step.Action
	id, err := s.openToolApproval(ctx, run, &agent.Pending{Call: call, Reason: reason})
	if err != nil {
		return err
	}
	if _, err := s.db.UpdateFindingBody(ctx, c.OrgID(), c.ProjectID(), fid, func(f *store.Finding) (string, error) {
		var r investigate.Report
		if err := json.Unmarshal([]byte(f.Body), &r); err != nil || idx >= len(r.NextSteps) {
			return "", store.NotFound("next step")
		}
		if r.NextSteps[idx].ApprovalID != "" {
			return "", &store.Error{Code: store.EConflict, Message: "an approval was already requested for this next step", Reason: "next_step_requested"}
		}
		r.NextSteps[idx].ApprovalID = id
		b, err := json.Marshal(r)
		return string(b), err
	}); err != nil {
		return err
	}
	if err := s.db.LinkNextStepApproval(ctx, id, c.OrgID(), c.ProjectID(), fid, idx); err != nil {
		return err
	}
	a, err := s.db.FindApproval(ctx, c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	c.Audit("finding.next_step_requested", "success", "approval", id, map[string]any{"finding_id": fid, "index": idx})
	return c.JSON(201, approvalOut(a))
}

// nextStepDecided runs an approved next step once (the approval is
// single-use: guardedTool consumes it) and keeps its result on the finding.
func (s *Server) nextStepDecided(ctx context.Context, a *store.Approval) {
	if a.Kind != store.ApprovalToolCall || a.SessionID != "" || a.Status != store.ApprovalApproved {
		return
	}
	fid, idx, err := s.db.NextStepOfApproval(ctx, a.ID)
	if err != nil {
		return
	}
	var subj ToolCallSubject
	if err := json.Unmarshal([]byte(a.Subject), &subj); err != nil {
		return
	}
	run := runner.RunInfo{OrgID: a.OrgID, ProjectID: a.ProjectID, UserID: a.DecidedBy, Source: "api", TriggerSource: "manual"}
	t := s.policyToolByName(ctx, run, subj.Tool)
	if t == nil {
		return
	}
	out, err := guardedTool{Tool: t, s: s, run: run}.Run(ctx, subj.Arguments)
	if err != nil {
		out = "error: " + err.Error()
	}
	if _, err := s.db.UpdateFindingBody(ctx, a.OrgID, a.ProjectID, fid, func(f *store.Finding) (string, error) {
		var r investigate.Report
		if err := json.Unmarshal([]byte(f.Body), &r); err != nil || idx >= len(r.NextSteps) {
			return "", store.NotFound("next step")
		}
		r.NextSteps[idx].Result = truncateText(out, 4000)
		b, err := json.Marshal(r)
		return string(b), err
	}); err != nil {
		s.log.Warn("finding: next step result not kept", "approval_id", a.ID, "err", err)
	}
	s.audit(ctx, AuditEvent{Action: "finding.next_step_run", Outcome: "success", OrgID: a.OrgID, ProjectID: a.ProjectID, ActorUserID: a.DecidedBy,
		TargetType: "approval", TargetID: a.ID, Detail: map[string]any{"finding_id": fid, "index": idx}})
}
