package server

import (
	"time"
)

// TaskStatsQuery sets the window of run counts.
type TaskStatsQuery struct {
	Days int `query:"days" default:"7" validate:"gte=1,lte=90" doc:"window of the run counts, in days"`
}

// TaskStatsOut summarises a project's tasks.
type TaskStatsOut struct {
	Total        int        `json:"total"`
	Enabled      int        `json:"enabled"`
	Disabled     int        `json:"disabled"`
	Scheduled    int        `json:"scheduled" doc:"enabled tasks with a schedule"`
	WindowDays   int        `json:"window_days"`
	Runs         int        `json:"runs" doc:"runs created in the window"`
	Pending      int        `json:"pending"`
	Running      int        `json:"running"`
	Completed    int        `json:"completed"`
	Failed       int        `json:"failed" doc:"failed and timed-out runs"`
	Cancelled    int        `json:"cancelled" doc:"includes fires skipped by overlap_policy skip"`
	SuccessRate  *float64   `json:"success_rate" doc:"completed / (completed + failed); null before any finished run"`
	NextRunAt    *time.Time `json:"next_run_at"`
	NextTaskID   *string    `json:"next_task_id"`
	NextTaskName string     `json:"next_task_name"`
}

// handleTaskStats is GET /api/tasks/stats.
func (s *Server) handleTaskStats(c *Ctx) error {
	var q TaskStatsQuery
	if err := c.BindQuery(&q); err != nil {
		return err
	}
	st, err := s.db.FindTaskStats(c.Context(), c.OrgID(), c.ProjectID(), s.Now().Add(-time.Duration(q.Days)*24*time.Hour))
	if err != nil {
		return err
	}
	out := TaskStatsOut{Total: st.Total, Enabled: st.Enabled, Disabled: st.Total - st.Enabled, Scheduled: st.Scheduled,
		WindowDays: q.Days, Runs: st.Runs, Pending: st.Pending, Running: st.Running, Completed: st.Completed,
		Failed: st.Failed + st.Timeout, Cancelled: st.Cancelled, NextRunAt: st.NextRunAt, NextTaskName: st.NextTaskName}
	if done := st.Completed + st.Failed + st.Timeout; done > 0 {
		r := float64(st.Completed) / float64(done)
		out.SuccessRate = &r
	}
	if st.NextTaskID != "" {
		out.NextTaskID = &st.NextTaskID
	}
	return c.JSON(200, out)
}
