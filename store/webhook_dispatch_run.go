package store

import (
	"context"
	"database/sql"
	"errors"
)

// The dispatch batch's run recording: what RecordWebhookRunTx does, minus
// the statements a batch of fresh events never needs. Per event that was a
// run-key lookup, a task read, an active-run query and an UPDATE of the
// first prompt; here the task and its active-run state are read once per
// batch and the first prompt goes into the INSERT.

// task returns a target task of the batch (NotFound as findTask).
func (s *txStmts) task(ctx context.Context, orgID, projectID, id string) (*Task, error) {
	// A batch's events mostly target the task the one before did: no key
	// is built for that one.
	if l := s.lastTask; l != nil && l.ID == id && l.OrgID == orgID && l.ProjectID == projectID {
		return l, nil
	}
	k := orgID + "\x00" + projectID + "\x00" + id
	if t, ok := s.tasks[k]; ok {
		if t != nil {
			s.lastTask = t
		}
		if t == nil {
			return nil, NotFound("task")
		}
		return t, nil
	}
	t, err := findTask(ctx, s.tx, orgID, projectID, id)
	if err != nil && !IsNotFound(err) {
		return nil, err
	}
	s.tasks[k] = t
	if t != nil {
		s.lastTask = t
	}
	return t, err
}

const queryTaskActiveRunID = `SELECT id FROM agent_sessions WHERE task_id = ? AND status IN ('pending', 'running') LIMIT 1`

// activeRun is the id of a pending or running run of task t ("" when none),
// read once per batch.
func (s *txStmts) activeRun(ctx context.Context, taskID string) (string, error) {
	if id, seen := s.active[taskID]; seen {
		return id, nil
	}
	var id string
	err := s.tx.QueryRowContext(ctx, queryTaskActiveRunID, taskID).Scan(&id)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return "", err
	}
	s.active[taskID] = id
	return id, nil
}

// webhookSkip says why a webhook event starts no run of t ("" when it
// does): a disabled task, the org's webhook runs held (no model configured,
// webhook_run_hold.go), or overlap_policy skip with a run in progress.
// The skip is recorded on the event (its dispatch item and status), not as
// a cancelled session: unlike a scheduled fire, which skips one slot, an
// alert storm would add a cancelled session per alert to the task's history.
func (s *txStmts) webhookSkip(ctx context.Context, t *Task) (reason, activeID string, err error) {
	if !t.Enabled {
		return "the task is disabled", "", nil
	}
	if held := s.tx.db.webhookRunHeld(t.OrgID, s.tx.Now); held != "" {
		return held, "", nil
	}
	if t.OverlapPolicy != "skip" {
		return "", "", nil
	}
	id, err := s.activeRun(ctx, t.ID)
	if err != nil || id == "" {
		return "", "", err
	}
	if l := &s.lastSkip; l.activeID != id || l.reason == "" {
		*l = runSkip{activeID: id, reason: "the previous run " + id + " was still in progress (overlap_policy skip)"}
	}
	return s.lastSkip.reason, id, nil
}

// runSkip is the last skip for a run in progress (webhookSkip), skipNote
// the last skip's timeline follow-up (skipFollowUp): a storm under
// overlap_policy skip, or with its runs held, skips one task's events for
// the same reason, and building these strings again for every event was a
// few hundredths of the writer's instructions.
type runSkip struct{ activeID, reason string }

type skipNote struct{ taskName, skip, activeID, text, data string }

// skipFollowUp is the text and data of a skip's follow-up (dispatchTargetTx).
func (s *txStmts) skipFollowUp(taskName, skip, activeID string) (text, data string) {
	n := &s.lastSkipNote
	if n.text == "" || n.taskName != taskName || n.skip != skip || n.activeID != activeID {
		data := "{}"
		if activeID != "" {
			data = `{"session_id":"` + activeID + `"}`
		}
		*n = skipNote{taskName: taskName, skip: skip, activeID: activeID,
			text: "agent run of " + taskName + " skipped: " + skip, data: data}
	}
	return n.text, n.data
}

// recordRun records the pending run of task t that a webhook event starts
// (the caller has checked webhookSkip). key names the event (its id), so no
// earlier run can hold it: the event left the received status in this same
// transaction, which is the exactly-once guard, and task_runs' UNIQUE
// run_key backs it up (a conflict fails the batch, which then rolls back
// whole).
// insertWebhookTaskRun is insertTaskRun for a batch's fresh event: its key
// is the new event's id, so no conflict is expected, and PostgreSQL
// pipelines it (pgDeferrable): a conflict would still fail the batch, from
// the next statement or the commit, as a unique violation.
const insertWebhookTaskRun = `INSERT INTO task_runs (session_id, task_id, org_id, run_key, scheduled_for, missed_fires, created_at)
		VALUES (?,?,?,?,NULL,0,?)`

func (s *txStmts) recordRun(ctx context.Context, t *Task, key, input string) (*AgentSession, error) {
	tx := s.tx
	prompt := t.Prompt
	if input != "" {
		prompt = input // the event input is the first prompt of a webhook run
	}
	sess := &AgentSession{OrgID: t.OrgID, ProjectID: t.ProjectID, Title: t.Name, FirstPrompt: prompt, TaskID: t.ID,
		TaskName: t.Name, AgentType: t.AgentType, Source: SourceTask, TriggerSource: TriggerWebhook, Status: SessionPending}
	if err := CreateAgentSessionTx(ctx, tx, sess); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, insertWebhookTaskRun, sess.ID, t.ID, t.OrgID, key, TS(tx.Now)); err != nil {
		if isUnique(err) {
			return nil, Errorf(EConflict, "this run was already recorded")
		}
		return nil, err
	}
	s.active[t.ID] = sess.ID
	return sess, nil
}

// RecordWebhookRunTx records a run of task started by a webhook event.
// input (the alert) becomes the session's first prompt: for a webhook run
// first_prompt is the event input, which FindPendingRuns hands to the
// scheduler as PendingRun.Input (the task's own prompt is read from the task
// when the run starts). key is the run's exactly-once key. For its callers
// (an approved approval, a missed heartbeat: one decision each, not an
// alert storm) a disabled task or an active run under overlap_policy skip
// records a cancelled session, as scheduled fires do; a webhook event's own
// dispatch records such a skip on the event instead (webhookSkip).
func RecordWebhookRunTx(ctx context.Context, tx *Tx, t *Task, key, input, userID string) (*AgentSession, error) {
	if s, err := findRunByKey(ctx, tx, t.OrgID, key); err == nil {
		return s, nil
	} else if !IsNotFound(err) {
		return nil, err
	}
	status, reason := SessionPending, ""
	if !t.Enabled {
		status, reason = SessionCancelled, "skipped: the task is disabled"
	} else if t.OverlapPolicy == "skip" {
		active, err := taskHasActiveRun(ctx, tx, t.ID)
		if err != nil {
			return nil, err
		}
		if active {
			status, reason = SessionCancelled, "skipped: the previous run was still in progress (overlap_policy skip)"
		}
	}
	s, err := recordRunTx(ctx, tx, t, key, TriggerWebhook, status, reason, userID, nil, 0)
	if err != nil {
		return nil, err
	}
	if input != "" {
		s.FirstPrompt = input
		if _, err := tx.ExecContext(ctx, `UPDATE agent_sessions SET first_prompt = ? WHERE id = ?`, s.FirstPrompt, s.ID); err != nil {
			return nil, err
		}
	}
	return s, nil
}
