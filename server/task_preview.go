package server

import (
	"time"

	"github.com/opsagent/opsagent/scheduler"
	"github.com/opsagent/opsagent/store"
)

// TaskPreviewRequest is a draft task: exactly the fields of TaskCreate,
// validated the same way (a bad schedule is the same 422).
type TaskPreviewRequest TaskCreate

// TaskPreviewQuery is the query of both preview routes.
type TaskPreviewQuery struct {
	Count int `query:"count" default:"5" validate:"gte=1,lte=50"`
}

// TaskRunTime is one upcoming fire: the instant in UTC and the wall-clock
// time in the task's zone.
type TaskRunTime struct {
	At    time.Time `json:"at"`
	Local string    `json:"local" doc:"RFC 3339 with the zone's offset"`
}

// TaskRuleOut is a must_always / must_never rule that applies to a run.
type TaskRuleOut struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	Text  string `json:"text"`
	Scope string `json:"scope"`
}

// TaskPreviewOut shows what a task will do before it runs.
type TaskPreviewOut struct {
	TaskID    *string          `json:"task_id"`
	Name      string           `json:"name"`
	AgentType string           `json:"agent_type"`
	Enabled   bool             `json:"enabled"`
	Schedule  string           `json:"schedule"`
	Timezone  string           `json:"timezone"`
	NextRuns  []TaskRunTime    `json:"next_runs" doc:"upcoming fires in the task's zone; empty for an on-demand task"`
	Prompt    string           `json:"prompt" doc:"the text the agent receives for the next run"`
	Rules     []TaskRuleOut    `json:"rules" doc:"rules that apply to the run (org and project rules); empty until rules are configured"`
	Budget    scheduler.Budget `json:"budget"`
	Warnings  []string         `json:"warnings"`
}

// handlePreviewDraft is POST /api/tasks/preview.
func (s *Server) handlePreviewDraft(c *Ctx) error {
	var q TaskPreviewQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	var b TaskPreviewRequest
	if err := c.Bind(&b); err != nil {
		return err
	}
	draft := TaskCreate(b)
	t, err := draftTask(&draft)
	if err != nil {
		return err
	}
	out := s.preview(t, q.Count)
	if out.Rules, err = s.previewRules(c); err != nil {
		return err
	}
	return c.JSON(200, out)
}

// handlePreviewTask is GET /api/tasks/{task_id}/preview.
func (s *Server) handlePreviewTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	var q TaskPreviewQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	t, err := s.db.FindTaskByID(c.Context(), c.OrgID(), c.ProjectID(), id)
	if err != nil {
		return err
	}
	out := s.preview(t, q.Count)
	out.TaskID = &t.ID
	if out.Rules, err = s.previewRules(c); err != nil {
		return err
	}
	return c.JSON(200, out)
}

// preview renders a (validated) task: fires computed from now in its zone,
// the prompt rendered for the first of them exactly as the scheduler will.
func (s *Server) preview(t *store.Task, n int) TaskPreviewOut {
	budget := scheduler.Budget{MaxSteps: t.MaxSteps, TimeoutSeconds: t.TimeoutSeconds, MaxCostUSD: t.MaxCostUSD}
	out := TaskPreviewOut{Name: t.Name, AgentType: t.AgentType, Enabled: t.Enabled, Schedule: t.Schedule, Timezone: t.Timezone,
		NextRuns: []TaskRunTime{}, Rules: []TaskRuleOut{}, Budget: budget, Warnings: []string{}}
	in := scheduler.PromptInput{TaskName: t.Name, Description: t.Description, Prompt: t.Prompt, AgentType: t.AgentType,
		Trigger: store.TriggerManual, Timezone: t.Timezone, Budget: budget}
	if t.Schedule != "" {
		if sched, err := scheduler.ValidateSchedule(t.Schedule, t.Timezone); err == nil {
			loc, _ := time.LoadLocation(t.Timezone)
			for _, at := range scheduler.NextRuns(sched, s.Now(), n) {
				out.NextRuns = append(out.NextRuns, TaskRunTime{At: at.UTC(), Local: at.In(loc).Format(time.RFC3339)})
			}
			if len(out.NextRuns) > 0 {
				first := out.NextRuns[0].At
				in.Trigger, in.ScheduledFor = store.TriggerScheduled, &first
			}
		}
	} else {
		out.Warnings = append(out.Warnings, "no schedule: the task runs only when triggered")
	}
	if !t.Enabled {
		out.Warnings = append(out.Warnings, "the task is disabled: scheduled fires are not recorded and trigger answers 409")
	}
	if s.cfg.LLMProvider == "" {
		out.Warnings = append(out.Warnings, scheduler.ErrNoLLM.Error())
	}
	out.Prompt = scheduler.RenderPrompt(in)
	return out
}

// previewRules are the enabled rules of the project and its org, as a run
// of the task would be held to them.
func (s *Server) previewRules(c *Ctx) ([]TaskRuleOut, error) {
	rs, err := s.db.FindRulesForProject(c.Context(), c.OrgID(), c.ProjectID(), true)
	if err != nil {
		return nil, err
	}
	out := make([]TaskRuleOut, 0, len(rs))
	for _, r := range rs {
		scope := "project"
		if r.ProjectID == "" {
			scope = "org"
		}
		out = append(out, TaskRuleOut{ID: r.ID, Kind: r.Kind, Text: r.Description, Scope: scope})
	}
	return out, nil
}
