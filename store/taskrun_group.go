package store

import "context"

// A run's start and end are write transactions of their own, each a durable
// commit on the server's one writer connection (PostgreSQL) or file
// (SQLite). The dispatcher starts every run it picks in one transaction, and
// runs ending at the same time share one (group commit): under an alert
// storm on queueing tasks that is one commit for several runs' transitions
// instead of one each.

// RunStart is a pending run the dispatcher picked.
type RunStart struct{ SessionID, TaskID string }

// StartTaskRuns moves pending runs to running, each with its task's last run
// stamped, in one transaction; started[i] is false when another dispatcher
// (or a delete) got to runs[i] first. An error starts none.
func (db *DB) StartTaskRuns(ctx context.Context, runs []RunStart) (started []bool, err error) {
	started = make([]bool, len(runs))
	err = db.writeHot(ctx, func(tx *Tx) error {
		clear(started) // Write may run this again
		for i, r := range runs {
			ok, err := transitionAgentSessionTx(ctx, tx, r.SessionID, SessionTransition{From: SessionPending, To: SessionRunning})
			if err != nil {
				return err
			}
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, updateTaskRunStarted, TS(tx.Now), SessionRunning, r.SessionID, r.TaskID); err != nil {
				return err
			}
			started[i] = true
		}
		return nil
	})
	if err != nil {
		clear(started)
	}
	return started, err
}

// maxFinishBatch bounds the run ends sharing one transaction.
const maxFinishBatch = 64

type runFinish struct {
	sessionID, taskID string
	t                 SessionTransition
}

// FinishTaskRun moves a running run to its terminal status and mirrors the
// outcome onto the task (last_status, last_error) while it is the task's
// latest run. Runs ending together share a transaction: it returns once the
// one holding this run committed; when that transaction fails, every run in
// it fails to save (each caller logs it; a run left running is failed as
// orphaned later, never run again).
func (db *DB) FinishTaskRun(ctx context.Context, sessionID, taskID string, t SessionTransition) error {
	db.finishInit.Do(func() {
		db.finishGC = &groupCommit[runFinish, struct{}]{max: maxFinishBatch, run: finishTaskRuns}
	})
	t.From = SessionRunning
	_, err := db.finishGC.do(ctx, db, runFinish{sessionID: sessionID, taskID: taskID, t: t})
	return err
}

func finishTaskRuns(ctx context.Context, tx *Tx, reqs []runFinish, _ []struct{}) error {
	for _, r := range reqs {
		ok, err := transitionAgentSessionTx(ctx, tx, r.sessionID, r.t)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		lastErr := ""
		if r.t.To != SessionCompleted {
			lastErr = r.t.Reason
		}
		if _, err := tx.ExecContext(ctx, updateTaskRunEnded, r.t.To, lastErr, r.taskID, r.sessionID); err != nil {
			return err
		}
		if err := deleteCheckpointTx(ctx, tx, r.sessionID); err != nil { // ended: nothing to resume
			return err
		}
	}
	return nil
}
