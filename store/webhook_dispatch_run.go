package store

import "context"

// The dispatch batch's run recording: what RecordWebhookRunTx does, minus
// the statements a batch of fresh events never needs. Per event that was a
// run-key lookup, a task read, an active-run query and an UPDATE of the
// first prompt; here the task and its active-run state are read once per
// batch and the first prompt goes into the INSERT.

// task returns a target task of the batch (NotFound as findTask).
func (s *txStmts) task(ctx context.Context, orgID, projectID, id string) (*Task, error) {
	k := orgID + "\x00" + projectID + "\x00" + id
	if t, ok := s.tasks[k]; ok {
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
	return t, err
}

// recordRun records the run of task t that a webhook event starts. key
// names the event (its id), so no earlier run can hold it: the event left
// the received status in this same transaction, which is the exactly-once
// guard, and task_runs' UNIQUE run_key backs it up (a conflict fails the
// batch, which then rolls back whole).
func (s *txStmts) recordRun(ctx context.Context, t *Task, key, input string) (*AgentSession, error) {
	tx := s.tx
	status, reason := SessionPending, ""
	if !t.Enabled {
		status, reason = SessionCancelled, "skipped: the task is disabled"
	} else if t.OverlapPolicy == "skip" {
		active, seen := s.active[t.ID]
		if !seen {
			var err error
			if active, err = taskHasActiveRun(ctx, tx, t.ID); err != nil {
				return nil, err
			}
			s.active[t.ID] = active
		}
		if active {
			status, reason = SessionCancelled, "skipped: the previous run was still in progress (overlap_policy skip)"
		}
	}
	prompt := t.Prompt
	if input != "" {
		prompt = input // the event input is the first prompt of a webhook run
	}
	sess := &AgentSession{OrgID: t.OrgID, ProjectID: t.ProjectID, Title: t.Name, FirstPrompt: prompt, TaskID: t.ID,
		TaskName: t.Name, AgentType: t.AgentType, Source: SourceTask, TriggerSource: TriggerWebhook, Status: status,
		Reason: reason}
	if err := CreateAgentSessionTx(ctx, tx, sess); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, insertTaskRun, sess.ID, t.ID, t.OrgID, key, nil, 0, TS(tx.Now)); err != nil {
		if isUnique(err) {
			return nil, Errorf(EConflict, "this run was already recorded")
		}
		return nil, err
	}
	if status == SessionPending {
		s.active[t.ID] = true
	}
	return sess, nil
}
