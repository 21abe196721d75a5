package server

import (
	"context"
	"encoding/json"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/server/agent/runner"
	"github.com/opsagent/opsagent/server/channels"
	"github.com/opsagent/opsagent/store"
)

// A task may post to a chat: the approvals its runs stop for (as cards
// with buttons, decided in the chat like any other) and each run's outcome.
// Incident investigations are task runs started by a webhook's routing
// rule, so pointing the rule's target task at a chat covers them.

// TaskChannelIn is the body of PUT /api/tasks/{task_id}/channel.
type TaskChannelIn struct {
	ChannelID    string `json:"channel_id" validate:"required,max=64"`
	Conversation string `json:"conversation" validate:"required,min=1,max=64,pattern=^[A-Za-z0-9_+-]+$" doc:"Slack channel id, Telegram chat id or WhatsApp number to post to"`
}

// TaskChannelOut is a task's chat target.
type TaskChannelOut struct {
	TaskID       string    `json:"task_id"`
	ChannelID    string    `json:"channel_id"`
	Conversation string    `json:"conversation"`
	CreatedAt    time.Time `json:"created_at"`
}

// taskChannelRoutes: where a task's runs post in chat.
func (s *Server) taskChannelRoutes() []*Route {
	tags := []string{"channels"}
	return []*Route{
		{Method: "GET", Path: "/api/tasks/{task_id}/channel", Summary: "Where the task's runs post their approvals and outcome in chat", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Resp: TaskChannelOut{}, Status: 200, Handle: s.handleGetTaskChannel},
		{Method: "PUT", Path: "/api/tasks/{task_id}/channel", Summary: "Post the task's approvals and run outcomes to a chat", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Body: TaskChannelIn{}, Resp: TaskChannelOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutTaskChannel},
		{Method: "DELETE", Path: "/api/tasks/{task_id}/channel", Summary: "Stop posting the task's runs to chat", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Status: 204, Handle: s.handleDeleteTaskChannel},
		{Method: "GET", Path: "/api/tasks/{task_id}/webhook/rules/{rule_id}/channel", Summary: "Where the rule's approvals and runs post in chat", Tags: tags, Auth: AuthAny, Perm: PermWebhooksRead, Project: true, Resp: TaskChannelOut{}, Status: 200, Handle: s.handleGetRuleChannel},
		{Method: "PUT", Path: "/api/tasks/{task_id}/webhook/rules/{rule_id}/channel", Summary: "Post the rule's approvals and the outcome of the runs it starts to a chat", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Body: TaskChannelIn{}, Resp: TaskChannelOut{}, Status: 200, MaxBody: 16 << 10, Handle: s.handlePutRuleChannel},
		{Method: "DELETE", Path: "/api/tasks/{task_id}/webhook/rules/{rule_id}/channel", Summary: "Stop posting the rule's approvals and runs to chat", Tags: tags, Auth: AuthAny, Perm: PermWebhooksWrite, Project: true, Status: 204, Handle: s.handleDeleteRuleChannel},
	}
}

// ruleParam is the routing rule of the path, of the caller's project.
func (s *Server) ruleParam(c *Ctx) (string, error) {
	task, err := c.IDParam("task_id")
	if err != nil {
		return "", err
	}
	id, err := c.IDParam("rule_id")
	if err != nil {
		return "", err
	}
	if _, err := s.db.FindWebhookRule(c.Context(), c.OrgID(), c.ProjectID(), task, id); err != nil {
		return "", err
	}
	return id, nil
}

// handleGetRuleChannel is GET /api/tasks/{task_id}/webhook/rules/{rule_id}/channel.
func (s *Server) handleGetRuleChannel(c *Ctx) error {
	id, err := s.ruleParam(c)
	if err != nil {
		return err
	}
	return s.getChannelTarget(c, "rule", id)
}

// handlePutRuleChannel is PUT /api/tasks/{task_id}/webhook/rules/{rule_id}/channel.
func (s *Server) handlePutRuleChannel(c *Ctx) error {
	id, err := s.ruleParam(c)
	if err != nil {
		return err
	}
	var req TaskChannelIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	return s.setChannelTarget(c, req, "rule", id, "webhook_rule")
}

// handleDeleteRuleChannel is DELETE /api/tasks/{task_id}/webhook/rules/{rule_id}/channel.
func (s *Server) handleDeleteRuleChannel(c *Ctx) error {
	id, err := s.ruleParam(c)
	if err != nil {
		return err
	}
	return s.deleteChannelTarget(c, "rule", id, "webhook_rule")
}

func taskChannelOut(t *store.ChannelTarget) TaskChannelOut {
	return TaskChannelOut{TaskID: t.TargetID, ChannelID: t.ChannelID, Conversation: t.Conversation, CreatedAt: t.CreatedAt}
}

// handleGetTaskChannel is GET /api/tasks/{task_id}/channel.
func (s *Server) handleGetTaskChannel(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	return s.getChannelTarget(c, "task", id)
}

// handlePutTaskChannel is PUT /api/tasks/{task_id}/channel.
func (s *Server) handlePutTaskChannel(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var req TaskChannelIn
	if err := c.Bind(&req); err != nil {
		return err
	}
	if _, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	return s.setChannelTarget(c, req, "task", id, "task")
}

// handleDeleteTaskChannel is DELETE /api/tasks/{task_id}/channel.
func (s *Server) handleDeleteTaskChannel(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	return s.deleteChannelTarget(c, "task", id, "task")
}

// A task's and a routing rule's chat targets differ only in what they point
// at (targetType) and how the audit log names it (resource); the handlers
// above check the path (and for a task the body first, then the task) and
// share reading, setting and removing the target.

func (s *Server) getChannelTarget(c *Ctx, targetType, id string) error {
	t, err := s.db.FindChannelTarget(c.Context(), c.OrgID(), c.ProjectID(), targetType, id)
	if err != nil {
		return err
	}
	return c.JSON(200, taskChannelOut(t))
}

func (s *Server) setChannelTarget(c *Ctx, req TaskChannelIn, targetType, id, resource string) error {
	if !store.ValidID(req.ChannelID) {
		return store.NotFound("channel")
	}
	t := &store.ChannelTarget{OrgID: c.OrgID(), ProjectID: c.ProjectID(), ChannelID: req.ChannelID, TargetType: targetType, TargetID: id, Conversation: req.Conversation}
	if err := s.db.SetChannelTarget(c.Context(), t); err != nil {
		return err
	}
	c.Audit(resource+".channel_set", "success", resource, id, map[string]any{"channel_id": req.ChannelID, "conversation": req.Conversation})
	return c.JSON(200, taskChannelOut(t))
}

func (s *Server) deleteChannelTarget(c *Ctx, targetType, id, resource string) error {
	if err := s.db.DeleteChannelTarget(c.Context(), c.OrgID(), c.ProjectID(), targetType, id); err != nil {
		return err
	}
	c.Audit(resource+".channel_removed", "success", resource, id, nil)
	return c.NoContent()
}

// runTarget opens the chat a task run posts to: its routing rule's (a
// webhook run), else its task's; nil when it posts nowhere.
func (s *Server) runTarget(ctx context.Context, orgID, projectID, taskID, sessionID string) (*channelRT, string) {
	if taskID == "" || s.chans == nil {
		return nil, ""
	}
	chID, conv, err := s.db.FindSessionTarget(ctx, sessionID)
	if err != nil {
		t, err := s.db.FindChannelTarget(ctx, orgID, projectID, "task", taskID)
		if err != nil {
			return nil, ""
		}
		chID, conv = t.ChannelID, t.Conversation
	}
	rt, err := s.channelRuntimeByID(ctx, chID)
	if err != nil || rt.ch.OrgID != orgID {
		return nil, ""
	}
	return rt, conv
}

// approvalOpenedInChat posts the card of an approval a task run stopped
// for to the run's chat (a chat session's own relay posts its cards).
func (s *Server) approvalOpenedInChat(run runner.RunInfo, approvalID string) {
	if run.TaskID == "" {
		return
	}
	s.channelBackground(time.Minute, func(ctx context.Context) {
		if rt, conv := s.runTarget(ctx, run.OrgID, run.ProjectID, run.TaskID, run.SessionID); rt != nil {
			s.postApprovalCard(ctx, rt, conv, "", approvalID)
		}
	})
}

// webhookDispatchedToChat follows what routing rules with a chat target
// started: an approval (requires_approval) is posted there as a card; a
// run is noted so its approvals and outcome go there too.
func (s *Server) webhookDispatchedToChat(ctx context.Context, outs []store.DispatchOutcome) {
	for _, o := range outs {
		for _, it := range o.Items {
			if it.RuleID == "" || it.ID == "" || (it.Kind != "approval" && it.Kind != "run") {
				continue
			}
			t, err := s.db.FindRuleTarget(ctx, it.RuleID)
			if err != nil {
				continue
			}
			if it.Kind == "run" {
				if err := s.db.SetSessionTarget(ctx, it.ID, t.ChannelID, t.Conversation); err != nil {
					s.log.Warn("channels: run's chat not recorded", "session_id", it.ID, "err", err)
				}
				continue
			}
			id, conv := it.ID, t.Conversation
			s.channelBackground(time.Minute, func(ctx context.Context) {
				if rt, err := s.channelRuntimeByID(ctx, t.ChannelID); err == nil {
					s.postApprovalCard(ctx, rt, conv, "", id)
				}
			})
		}
	}
}

// ruleApprovedToChat: the run an approved webhook_event approval started
// posts to its rule's chat.
func (s *Server) ruleApprovedToChat(ctx context.Context, a *store.Approval) {
	if a.Kind != store.ApprovalWebhookEvent || a.Status != store.ApprovalApproved || a.RuleID == "" {
		return
	}
	var res struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal([]byte(a.Result), &res) != nil || res.SessionID == "" {
		return
	}
	if t, err := s.db.FindRuleTarget(ctx, a.RuleID); err == nil {
		if err := s.db.SetSessionTarget(ctx, res.SessionID, t.ChannelID, t.Conversation); err != nil {
			s.log.Warn("channels: run's chat not recorded", "session_id", res.SessionID, "err", err)
		}
	}
}

// channelTaskExecutor runs tasks with inner and posts each run's outcome
// to the task's chat.
type channelTaskExecutor struct {
	inner scheduler.Executor
	s     *Server
}

// Execute runs the task and posts its outcome.
func (e channelTaskExecutor) Execute(ctx context.Context, run *scheduler.Run) (scheduler.Outcome, error) {
	out, err := e.inner.Execute(ctx, run)
	if err == nil && out.Suspended {
		return out, nil // not over: the resumed run posts its one result
	}
	status, detail := out.Status, out.Summary
	if status == "" {
		status = store.SessionCompleted
	}
	if err != nil {
		status, detail = store.SessionFailed, err.Error()
	} else if out.Reason != "" {
		detail = out.Reason
	}
	r := *run
	e.s.channelBackground(time.Minute, func(ctx context.Context) {
		rt, conv := e.s.runTarget(ctx, r.OrgID, r.ProjectID, r.TaskID, r.SessionID)
		if rt == nil || !e.s.withinWindow(ctx, rt, conv) {
			return
		}
		text := "Task " + r.TaskName + ": " + status
		if detail != "" {
			text += "\n" + detail
		}
		if _, err := rt.client.Post(ctx, conv, "", channels.Message{Text: text}); err != nil {
			e.s.log.Warn("channels: task outcome not posted", "task_id", r.TaskID, "err", err)
		}
	})
	return out, err
}
