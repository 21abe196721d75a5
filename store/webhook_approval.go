package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
)

// approveWebhookEventTx carries out an approved webhook_event approval: the
// event is dispatched to the approved target (the subject's target_task_id,
// with its input), exactly once per approval. The result names the run.
func approveWebhookEventTx(ctx context.Context, tx *Tx, a *Approval) (string, error) {
	var subj struct {
		TargetTaskID string `json:"target_task_id"`
		Input        string `json:"input"`
	}
	if err := json.Unmarshal([]byte(a.Subject), &subj); err != nil {
		return "", err
	}
	s, err := dispatchApprovedEventTx(ctx, tx, a, subj.TargetTaskID, subj.Input)
	if err != nil {
		return "", err
	}
	b, _ := json.Marshal(map[string]any{"session_id": s.ID, "task_id": subj.TargetTaskID, "status": s.Status})
	return string(b), nil
}

func dispatchApprovedEventTx(ctx context.Context, tx *Tx, a *Approval, targetTaskID, input string) (*AgentSession, error) {
	task, err := findTask(ctx, tx, a.OrgID, a.ProjectID, targetTaskID)
	if err != nil {
		return nil, &Error{Code: EConflict, Message: "the task this approval would run no longer exists", Reason: "target_task_gone"}
	}
	s, err := RecordWebhookRunTx(ctx, tx, task, "approval:"+a.ID, input, a.DecidedBy)
	if err != nil {
		return nil, err
	}
	if a.EventID != "" {
		var raw string
		err := tx.QueryRowContext(ctx, `SELECT dispatch FROM webhook_events WHERE id = ? AND org_id = ?`, a.EventID, a.OrgID).Scan(&raw)
		if err == nil {
			var items []DispatchItem
			_ = json.Unmarshal([]byte(raw), &items)
			items = append(items, DispatchItem{Kind: "run", ID: s.ID, TaskID: task.ID, RuleID: a.RuleID, Status: s.Status, Reason: "approved"})
			b, _ := json.Marshal(items)
			if _, err := tx.ExecContext(ctx, `UPDATE webhook_events SET dispatch = ?, status = CASE WHEN status = ? THEN ? ELSE status END
				WHERE id = ?`, string(b), EventApprovalPending, EventDispatched, a.EventID); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
	}
	return s, nil
}
