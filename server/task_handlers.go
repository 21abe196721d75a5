package server

import (
	"errors"
	"strings"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// Task defaults when neither the body nor a template says otherwise.
const (
	defaultTaskTimeout  = 900
	defaultTaskMaxSteps = 30
)

var errAgentNotInstalled = errors.New("an LLM is configured but this build has no agent executor installed; task runs cannot start")

// checkTiming validates a schedule in a zone, each at its own loc.
func checkTiming(schedule, tz string) error {
	var errs []FieldError
	if err := scheduler.ValidateTimezone(tz); err != nil {
		errs = append(errs, FieldError{Loc: []any{"body", "timezone"}, Msg: "Invalid time zone: use an IANA name such as UTC or Europe/Paris", Type: "value_error"})
	} else if schedule != "" {
		if _, err := scheduler.ValidateSchedule(schedule, tz); err != nil {
			errs = append(errs, FieldError{Loc: []any{"body", "schedule"}, Msg: "Invalid schedule: " + err.Error(), Type: "value_error"})
		}
	}
	if len(errs) > 0 {
		return &ValidationError{Errors: errs}
	}
	return nil
}

// draftTask turns a create (or preview) body into a task, applying the
// template and the defaults; it reports missing and invalid fields as 422.
func draftTask(b *TaskCreate) (*store.Task, error) {
	t := &store.Task{AgentType: "general", Timezone: "UTC", Enabled: true, MissedFirePolicy: "run_once",
		OverlapPolicy: "skip", TimeoutSeconds: defaultTaskTimeout, MaxSteps: defaultTaskMaxSteps}
	if b.TemplateID != nil {
		tpl, ok := findTemplate(*b.TemplateID)
		if !ok {
			return nil, invalid("Unknown template; see GET /api/task-templates", "value_error", "body", "template_id")
		}
		t.TemplateID, t.Name, t.Description, t.Prompt = tpl.ID, tpl.Name, tpl.Description, tpl.Prompt
		t.AgentType, t.Schedule, t.MissedFirePolicy, t.OverlapPolicy = tpl.AgentType, tpl.Schedule, tpl.MissedFirePolicy, tpl.OverlapPolicy
		t.TimeoutSeconds, t.MaxSteps = tpl.TimeoutSeconds, tpl.MaxSteps
	}
	store.TaskPatch{Name: b.Name, Description: b.Description, Prompt: b.Prompt, AgentType: b.AgentType,
		Schedule: b.Schedule, Timezone: b.Timezone, Enabled: b.Enabled, MissedFirePolicy: b.MissedFirePolicy,
		OverlapPolicy: b.OverlapPolicy, TimeoutSeconds: b.TimeoutSeconds, MaxSteps: b.MaxSteps, MaxCostUSD: b.MaxCostUSD}.Apply(t)
	t.Schedule = strings.TrimSpace(t.Schedule)
	var errs []FieldError
	if strings.TrimSpace(t.Name) == "" {
		errs = append(errs, FieldError{Loc: []any{"body", "name"}, Msg: "Field required", Type: "missing"})
	}
	if strings.TrimSpace(t.Prompt) == "" {
		errs = append(errs, FieldError{Loc: []any{"body", "prompt"}, Msg: "Field required", Type: "missing"})
	}
	if len(errs) > 0 {
		return nil, &ValidationError{Errors: errs}
	}
	return t, checkTiming(t.Schedule, t.Timezone)
}

// handleCreateTask is POST /api/tasks.
func (s *Server) handleCreateTask(c *Ctx) error {
	var b TaskCreate
	if err := c.Bind(&b); err != nil {
		return err
	}
	t, err := draftTask(&b)
	if err != nil {
		return err
	}
	t.OrgID, t.ProjectID, t.CreatedBy = c.OrgID(), c.ProjectID(), c.ID.UserID
	if err := s.db.CreateTask(c.Context(), t, scheduler.NextRun); err != nil {
		return err
	}
	if t.Enabled && t.NextRunAt != nil {
		// Only a scheduled, enabled task can come due. Waking the loop for
		// every other create made it look for due tasks and pending runs
		// once per create (a third of a create's CPU under load, and the
		// main source of the run-to-run spread of POST /api/tasks).
		s.tasks.Wake()
	}
	c.Audit("task.created", "success", "task", t.ID, map[string]any{"name": t.Name, "schedule": t.Schedule})
	return c.JSON(201, taskOut(t))
}

// handleListTasks is GET /api/tasks.
func (s *Server) handleListTasks(c *Ctx) error {
	var q TaskListQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	if q.CreatedAfter != nil && q.CreatedBefore != nil && !q.CreatedAfter.Before(*q.CreatedBefore) {
		return invalid("created_after must be before created_before", "value_error", "query", "created_after")
	}
	key := taskPageKey(c.OrgID(), c.ProjectID(), &q)
	if b, ok := s.taskPages.Get(key); ok {
		writeJSONBytes(c.W, b)
		return nil
	}
	stamp, cacheable := s.taskPages.Stamp()
	ts, total, err := s.db.FindTasks(c.Context(), store.TaskFilter{OrgID: c.OrgID(), ProjectID: c.ProjectID(),
		Search: q.Search, AgentType: q.AgentType, Enabled: q.Enabled, CreatedAfter: q.CreatedAfter,
		CreatedBefore: q.CreatedBefore, Sort: q.Sort, Limit: q.Limit, Offset: q.Offset})
	if err != nil {
		return err
	}
	page := TaskPage{Items: make([]TaskListOut, 0, len(ts)), Total: total, Limit: q.Limit, Offset: q.Offset}
	for i := range ts {
		page.Items = append(page.Items, taskListOut(&ts[i]))
	}
	b, err := encodeJSON(page)
	if err != nil {
		return err
	}
	if cacheable && len(b) <= taskPageMaxBytes {
		s.taskPages.Put(key, stamp, b)
	}
	writeJSONBytes(c.W, b)
	return nil
}

// handleGetTask is GET /api/tasks/{task_id}.
func (s *Server) handleGetTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	t, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	return c.JSON(200, taskOut(t))
}

// handleUpdateTask is PATCH /api/tasks/{task_id}.
func (s *Server) handleUpdateTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var b TaskUpdate
	if err := c.Bind(&b); err != nil {
		return err
	}
	cur, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	if b.Schedule != nil {
		trimmed := strings.TrimSpace(*b.Schedule)
		b.Schedule = &trimmed
	}
	schedule, tz := cur.Schedule, cur.Timezone
	if b.Schedule != nil {
		schedule = *b.Schedule
	}
	if b.Timezone != nil {
		tz = *b.Timezone
	}
	if err := checkTiming(schedule, tz); err != nil {
		return err
	}
	patch := store.TaskPatch{Name: b.Name, Description: b.Description, Prompt: b.Prompt, AgentType: b.AgentType,
		Schedule: b.Schedule, Timezone: b.Timezone, Enabled: b.Enabled, MissedFirePolicy: b.MissedFirePolicy,
		OverlapPolicy: b.OverlapPolicy, TimeoutSeconds: b.TimeoutSeconds, MaxSteps: b.MaxSteps, MaxCostUSD: b.MaxCostUSD}
	t, err := s.db.UpdateTask(c.Context(), c.OrgID(), c.ProjectID(), id, patch, scheduler.NextRun)
	if err != nil {
		return err
	}
	s.tasks.Wake()
	c.Audit("task.updated", "success", "task", t.ID, nil)
	return c.JSON(200, taskOut(t))
}

// handleDeleteTask is DELETE /api/tasks/{task_id}.
func (s *Server) handleDeleteTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	if err := s.db.DeleteTask(c.Context(), c.OrgID(), c.ProjectID(), id); err != nil {
		return err
	}
	c.Audit("task.deleted", "success", "task", id, nil)
	return c.NoContent()
}

// handleBulkDeleteTasks is POST /api/tasks/bulk-delete.
func (s *Server) handleBulkDeleteTasks(c *Ctx) error {
	var b TaskBulkDeleteRequest
	if err := c.Bind(&b); err != nil {
		return err
	}
	var valid, notFound []string
	for _, id := range b.IDs {
		if store.ValidID(id) {
			valid = append(valid, id)
		} else {
			notFound = append(notFound, id)
		}
	}
	deleted, missing, err := s.db.DeleteTasks(c.Context(), c.OrgID(), c.ProjectID(), valid)
	if err != nil {
		return err
	}
	out := TaskBulkDeleteResponse{Deleted: append([]string{}, deleted...), NotFound: append(append([]string{}, missing...), notFound...), Count: len(deleted)}
	if len(deleted) > 0 {
		c.Audit("task.bulk_deleted", "success", "task", "", map[string]any{"ids": deleted})
	}
	return c.JSON(200, out)
}

// handleCloneTask is POST /api/tasks/{task_id}/clone. The copy starts
// disabled so a scheduled task is never doubled by accident.
func (s *Server) handleCloneTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	src, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	cp := *src
	cp.Name = truncate(src.Name+" (copy)", 120)
	cp.Enabled, cp.CreatedBy = false, c.ID.UserID
	if err := s.db.CreateTask(c.Context(), &cp, scheduler.NextRun); err != nil {
		return err
	}
	c.Audit("task.cloned", "success", "task", cp.ID, map[string]any{"source_id": src.ID})
	return c.JSON(201, taskOut(&cp))
}
