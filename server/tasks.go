package server

import (
	"context"
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// Task records. TaskCreate's {name, prompt, schedule?, enabled?, agent_type?}
// is fixed by CONVENTIONS.md; the rest is documented here and in OpenAPI.

// TaskCreate is the body of POST /api/tasks. With template_id, every field
// left out is taken from the template (name and prompt included).
type TaskCreate struct {
	Name             *string  `json:"name" validate:"nonnull,min=1,max=120" doc:"required unless template_id is given"`
	Prompt           *string  `json:"prompt" validate:"nonnull,min=1,max=20000" doc:"what the agent is asked to do; required unless template_id is given"`
	Description      *string  `json:"description" validate:"nonnull,max=2000"`
	Schedule         *string  `json:"schedule" validate:"nonnull,max=120" doc:"5-field cron expression (minute hour day-of-month month day-of-week) or a descriptor (@hourly, @daily, @weekly, @monthly, @every 15m with at least 1m); empty or absent = on demand only"`
	Timezone         *string  `json:"timezone" validate:"nonnull,max=64" doc:"IANA zone the schedule is read in; default UTC"`
	Enabled          *bool    `json:"enabled" validate:"nonnull" doc:"default true"`
	AgentType        *string  `json:"agent_type" validate:"nonnull,oneof=general sre security cost kubernetes database" doc:"agent profile; default general"`
	MissedFirePolicy *string  `json:"missed_fire_policy" validate:"nonnull,oneof=skip run_once" doc:"fires missed while the server was stopped: run_once (default) runs one catch-up run for them all, skip drops them"`
	OverlapPolicy    *string  `json:"overlap_policy" validate:"nonnull,oneof=skip queue" doc:"a fire while the previous run is pending or running: skip (default) records a scheduled fire as a cancelled session and a webhook event as skipped (on the event), queue runs it after"`
	TimeoutSeconds   *int     `json:"timeout_seconds" validate:"nonnull,gte=30,lte=86400" doc:"default 900; the run ends with status timeout"`
	MaxSteps         *int     `json:"max_steps" validate:"nonnull,gte=1,lte=200" doc:"agent steps per run; default 30"`
	MaxCostUSD       *float64 `json:"max_cost_usd" validate:"nonnull,gte=0,lte=10000" doc:"cost cap per run in USD; 0 (default) = only the org budget"`
	TemplateID       *string  `json:"template_id" validate:"nonnull,max=64" doc:"id from GET /api/task-templates"`
}

// TaskUpdate is the body of PATCH /api/tasks/{task_id}: fields present are changed.
// Changing schedule, timezone or enabled recomputes next_run_at from now.
type TaskUpdate struct {
	Name             *string  `json:"name" validate:"nonnull,min=1,max=120"`
	Prompt           *string  `json:"prompt" validate:"nonnull,min=1,max=20000"`
	Description      *string  `json:"description" validate:"nonnull,max=2000"`
	Schedule         *string  `json:"schedule" validate:"nonnull,max=120" doc:"\"\" removes the schedule (on demand only)"`
	Timezone         *string  `json:"timezone" validate:"nonnull,max=64"`
	Enabled          *bool    `json:"enabled" validate:"nonnull"`
	AgentType        *string  `json:"agent_type" validate:"nonnull,oneof=general sre security cost kubernetes database"`
	MissedFirePolicy *string  `json:"missed_fire_policy" validate:"nonnull,oneof=skip run_once"`
	OverlapPolicy    *string  `json:"overlap_policy" validate:"nonnull,oneof=skip queue"`
	TimeoutSeconds   *int     `json:"timeout_seconds" validate:"nonnull,gte=30,lte=86400"`
	MaxSteps         *int     `json:"max_steps" validate:"nonnull,gte=1,lte=200"`
	MaxCostUSD       *float64 `json:"max_cost_usd" validate:"nonnull,gte=0,lte=10000"`
}

// TaskListOut is one row of the task list (the prompt is left out).
type TaskListOut struct {
	ID               string     `json:"id"`
	ProjectID        string     `json:"project_id"`
	Name             string     `json:"name"`
	Description      string     `json:"description"`
	AgentType        string     `json:"agent_type"`
	Schedule         string     `json:"schedule"`
	Timezone         string     `json:"timezone"`
	Enabled          bool       `json:"enabled"`
	MissedFirePolicy string     `json:"missed_fire_policy"`
	OverlapPolicy    string     `json:"overlap_policy"`
	TemplateID       string     `json:"template_id"`
	LastRunAt        *time.Time `json:"last_run_at"`
	LastStatus       string     `json:"last_status" doc:"status of the latest run: running, completed, failed, timeout, cancelled; \"\" before the first"`
	LastSessionID    *string    `json:"last_session_id"`
	LastError        string     `json:"last_error" doc:"why the latest run did not complete"`
	NextRunAt        *time.Time `json:"next_run_at" doc:"next scheduled fire (UTC); null when disabled or unscheduled"`
	CreatedAt        time.Time  `json:"created_at"`
	UpdatedAt        time.Time  `json:"updated_at"`
}

// TaskOut is a whole task.
type TaskOut struct {
	TaskListOut
	OrgID          string  `json:"org_id"`
	Prompt         string  `json:"prompt"`
	TimeoutSeconds int     `json:"timeout_seconds"`
	MaxSteps       int     `json:"max_steps"`
	MaxCostUSD     float64 `json:"max_cost_usd"`
	CreatedBy      *string `json:"created_by"`
}

// TaskPage is PaginatedResponse_TaskListOut_.
type TaskPage struct {
	Items  []TaskListOut `json:"items"`
	Total  int           `json:"total"`
	Limit  int           `json:"limit"`
	Offset int           `json:"offset"`
}

func (TaskPage) schemaName() string { return "PaginatedResponse_TaskListOut_" }

// TaskListQuery are the filters of GET /api/tasks.
type TaskListQuery struct {
	Search        string     `query:"search" validate:"max=200" doc:"case-insensitive substring of name, description or prompt"`
	AgentType     string     `query:"agent_type" validate:"oneof=general sre security cost kubernetes database"`
	Enabled       *bool      `query:"enabled"`
	Sort          string     `query:"sort" default:"created_desc" validate:"oneof=created_desc created_asc name_asc name_desc updated_desc next_run_asc last_run_desc" doc:"next_run_asc and last_run_desc put tasks without a time last"`
	CreatedAfter  *time.Time `query:"created_after" doc:"RFC 3339 or YYYY-MM-DD; inclusive"`
	CreatedBefore *time.Time `query:"created_before" doc:"RFC 3339 or YYYY-MM-DD; exclusive"`
	Limit         int        `query:"limit" default:"25" validate:"gte=1,lte=200"`
	Offset        int        `query:"offset" default:"0" validate:"gte=0"`
}

// TaskBulkDeleteRequest lists the tasks to delete.
type TaskBulkDeleteRequest struct {
	IDs []string `json:"ids" validate:"required,min=1,max=200"`
}

// TaskBulkDeleteResponse says what happened to each id: another tenant's
// ids, malformed ids and absent ids are all reported not_found, untouched.
type TaskBulkDeleteResponse struct {
	Deleted  []string `json:"deleted"`
	NotFound []string `json:"not_found"`
	Count    int      `json:"deleted_count"`
}

// taskRoutes: CRUD, templates, stats, preview, clone and trigger of tasks.
func (s *Server) taskRoutes() []*Route {
	tags := []string{"tasks"}
	return []*Route{
		{Method: "GET", Path: "/api/task-templates", Summary: "Built-in catalogue of SRE task templates", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Resp: []TaskTemplateOut{}, Status: 200, MCP: true, Handle: s.handleTaskTemplates},
		{Method: "GET", Path: "/api/tasks/stats", Summary: "Task counts, recent runs and failures, success rate, next due run", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Query: TaskStatsQuery{}, Resp: TaskStatsOut{}, Status: 200, MCP: true, Handle: s.handleTaskStats},
		{Method: "GET", Path: "/api/tasks", Summary: "List tasks (filters, sort, pagination)", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Query: TaskListQuery{}, Resp: TaskPage{}, Status: 200, MCP: true, Handle: s.handleListTasks},
		{Method: "POST", Path: "/api/tasks", Summary: "Create a task (optionally from a template)", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Body: TaskCreate{}, Resp: TaskOut{}, Status: 201, MaxBody: 64 << 10, MCP: true, Handle: s.handleCreateTask},
		{Method: "POST", Path: "/api/tasks/bulk-delete", Summary: "Delete several tasks; unknown ids are reported not_found", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Body: TaskBulkDeleteRequest{}, Resp: TaskBulkDeleteResponse{}, Status: 200, MaxBody: 64 << 10, Handle: s.handleBulkDeleteTasks},
		{Method: "POST", Path: "/api/tasks/preview", Summary: "Preview a draft task: schedule check, next runs, rendered prompt, rules and budget", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Body: TaskPreviewRequest{}, Query: TaskPreviewQuery{}, Resp: TaskPreviewOut{}, Status: 200, MaxBody: 64 << 10, MCP: true, Handle: s.handlePreviewDraft},
		{Method: "GET", Path: "/api/tasks/{task_id}", Summary: "Read a task", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Resp: TaskOut{}, Status: 200, MCP: true, Handle: s.handleGetTask},
		{Method: "PATCH", Path: "/api/tasks/{task_id}", Summary: "Change a task (takes effect at once, no restart)", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Body: TaskUpdate{}, Resp: TaskOut{}, Status: 200, MaxBody: 64 << 10, MCP: true, Handle: s.handleUpdateTask},
		{Method: "DELETE", Path: "/api/tasks/{task_id}", Summary: "Delete a task (its past runs stay; pending runs are cancelled)", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Status: 204, Handle: s.handleDeleteTask},
		{Method: "GET", Path: "/api/tasks/{task_id}/preview", Summary: "Preview a saved task", Tags: tags, Auth: AuthAny, Perm: PermTasksRead, Project: true, Query: TaskPreviewQuery{}, Resp: TaskPreviewOut{}, Status: 200, MCP: true, Handle: s.handlePreviewTask},
		{Method: "POST", Path: "/api/tasks/{task_id}/clone", Summary: "Copy a task (the copy starts disabled)", Tags: tags, Auth: AuthAny, Perm: PermTasksWrite, Project: true, Resp: TaskOut{}, Status: 201, Handle: s.handleCloneTask},
		{Method: "POST", Path: "/api/tasks/{task_id}/trigger", Summary: "Run a task now (Idempotency-Key: the same key returns the same run; disabled task: 409 task_disabled)", Tags: tags, Auth: AuthAny, Perm: PermTasksRun, Project: true, Resp: TaskTriggerResponse{}, Status: 202, MCP: true, Handle: s.handleTriggerTask},
	}
}

// newTaskScheduler builds the scheduler of task runs. Without an executor
// from Deps every run fails fast with the reason the agent cannot run.
func (s *Server) newTaskScheduler(d Deps) *scheduler.Tasks {
	exec := d.TaskExecutor
	if exec == nil {
		exec = scheduler.Unconfigured{}
		if s.cfg.LLMProvider != "" {
			exec = scheduler.Unconfigured{Err: errAgentNotInstalled}
		}
	}
	exec = channelTaskExecutor{inner: exec, s: s} // run outcomes to the task's chat (channels_tasks.go)
	return scheduler.NewTasks(s.db, scheduler.TaskOptions{Executor: exec, Now: func() time.Time { return s.Now() }, Logger: s.log.With("component", "tasks"), Telemetry: s.metrics,
		Leadership: s.db.NewLeader("scheduler", s.log.With("component", "tasks"))})
}

// TaskScheduler exposes the task scheduler (tests drive ticks with it).
func (s *Server) TaskScheduler() *scheduler.Tasks { return s.tasks }

// startTasks runs the task scheduler for the life of ctx; the returned stop waits for runs.
func (s *Server) startTasks(ctx context.Context) func() {
	if err := s.tasks.Start(ctx); err != nil {
		s.log.Error("task scheduler did not start", "err", err)
	}
	return s.tasks.Stop
}

func taskListOut(t *store.Task) TaskListOut {
	o := TaskListOut{ID: t.ID, ProjectID: t.ProjectID, Name: t.Name, Description: t.Description, AgentType: t.AgentType,
		Schedule: t.Schedule, Timezone: t.Timezone, Enabled: t.Enabled, MissedFirePolicy: t.MissedFirePolicy,
		OverlapPolicy: t.OverlapPolicy, TemplateID: t.TemplateID, LastRunAt: t.LastRunAt, LastStatus: t.LastStatus,
		LastError: t.LastError, NextRunAt: t.NextRunAt, CreatedAt: t.CreatedAt, UpdatedAt: t.UpdatedAt}
	if t.LastSessionID != "" {
		o.LastSessionID = &t.LastSessionID
	}
	return o
}

func taskOut(t *store.Task) TaskOut {
	o := TaskOut{TaskListOut: taskListOut(t), OrgID: t.OrgID, Prompt: t.Prompt, TimeoutSeconds: t.TimeoutSeconds,
		MaxSteps: t.MaxSteps, MaxCostUSD: t.MaxCostUSD}
	if t.CreatedBy != "" {
		o.CreatedBy = &t.CreatedBy
	}
	return o
}
