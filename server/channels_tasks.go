package server

import (
	"context"
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
	}
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
	t, err := s.db.FindChannelTarget(c.Context(), c.OrgID(), c.ProjectID(), "task", id)
	if err != nil {
		return err
	}
	return c.JSON(200, taskChannelOut(t))
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
	if !store.ValidID(req.ChannelID) {
		return store.NotFound("channel")
	}
	t := &store.ChannelTarget{OrgID: c.OrgID(), ProjectID: c.ProjectID(), ChannelID: req.ChannelID, TargetType: "task", TargetID: id, Conversation: req.Conversation}
	if err := s.db.SetChannelTarget(c.Context(), t); err != nil {
		return err
	}
	c.Audit("task.channel_set", "success", "task", id, map[string]any{"channel_id": req.ChannelID, "conversation": req.Conversation})
	return c.JSON(200, taskChannelOut(t))
}

// handleDeleteTaskChannel is DELETE /api/tasks/{task_id}/channel.
func (s *Server) handleDeleteTaskChannel(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteChannelTarget(c.Context(), c.OrgID(), c.ProjectID(), "task", id); err != nil {
		return err
	}
	c.Audit("task.channel_removed", "success", "task", id, nil)
	return c.NoContent()
}

// taskTarget opens the chat a task posts to; nil when it posts nowhere.
func (s *Server) taskTarget(ctx context.Context, orgID, projectID, taskID string) (*channelRT, *store.ChannelTarget) {
	if taskID == "" || s.chans == nil {
		return nil, nil
	}
	t, err := s.db.FindChannelTarget(ctx, orgID, projectID, "task", taskID)
	if err != nil {
		return nil, nil
	}
	rt, err := s.channelRuntimeByID(ctx, t.ChannelID)
	if err != nil {
		return nil, nil
	}
	return rt, t
}

// approvalOpenedInChat posts the card of an approval a task run stopped
// for to the task's chat (a chat session's own relay posts its cards).
func (s *Server) approvalOpenedInChat(run runner.RunInfo, approvalID string) {
	if run.TaskID == "" {
		return
	}
	s.channelBackground(time.Minute, func(ctx context.Context) {
		if rt, t := s.taskTarget(ctx, run.OrgID, run.ProjectID, run.TaskID); rt != nil {
			s.postApprovalCard(ctx, rt, t.Conversation, "", approvalID)
		}
	})
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
		rt, t := e.s.taskTarget(ctx, r.OrgID, r.ProjectID, r.TaskID)
		if rt == nil || !e.s.withinWindow(ctx, rt, t.Conversation) {
			return
		}
		text := "Task " + r.TaskName + ": " + status
		if detail != "" {
			text += "\n" + detail
		}
		if _, err := rt.client.Post(ctx, t.Conversation, "", channels.Message{Text: text}); err != nil {
			e.s.log.Warn("channels: task outcome not posted", "task_id", r.TaskID, "err", err)
		}
	})
	return out, err
}
