package server

import (
	"strings"
	"time"

	"github.com/opsagent/opsagent/store"
)

// TaskTriggerResponse answers POST /api/tasks/{task_id}/trigger (202): the
// run was recorded and will start as soon as the overlap rule and the org's
// concurrency limit allow.
type TaskTriggerResponse struct {
	SessionID     string    `json:"session_id"`
	TaskID        string    `json:"task_id"`
	Status        string    `json:"status" doc:"the run's current status (pending right after a new trigger)"`
	TriggerSource string    `json:"trigger_source"`
	Replayed      bool      `json:"replayed" doc:"true when the Idempotency-Key was seen before and this is the run it started"`
	CreatedAt     time.Time `json:"created_at"`
}

const maxIdempotencyKey = 200

// handleTriggerTask is POST /api/tasks/{task_id}/trigger. Idempotency-Key
// (optional, at most 200 printable characters, scoped to the task, kept for
// the life of the task) makes retries safe: the same key answers the same
// run and never starts a second. A disabled task answers 409 task_disabled.
func (s *Server) handleTriggerTask(c *Ctx) error {
	id, err := c.IDParam("task_id")
	if err != nil {
		return err
	}
	key := strings.TrimSpace(c.R.Header.Get("Idempotency-Key"))
	if len(key) > maxIdempotencyKey || strings.ContainsFunc(key, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return invalid("Idempotency-Key must be at most 200 printable characters", "value_error", "header", "idempotency-key")
	}
	sess, replay, err := s.db.TriggerTask(c.Context(), c.OrgID(), c.ProjectID(), id, key, c.ID.UserID)
	if err != nil {
		return err
	}
	if !replay {
		s.tasks.Wake()
		c.Audit("task.triggered", "success", "task", id, map[string]any{"session_id": sess.ID})
	}
	return c.JSON(202, TaskTriggerResponse{SessionID: sess.ID, TaskID: id, Status: sess.Status,
		TriggerSource: store.TriggerManual, Replayed: replay, CreatedAt: sess.CreatedAt})
}
