package scheduler

import (
	"context"
	"fmt"
)

// What a start does with the runs the last process left behind: resume
// those with a checkpoint, fail the rest, then dispatch what was recorded.

// Recover is the start-up step: runs left running by a stopped process
// resume from their last checkpoint (the executor repeats no step it had
// completed and runs no change it had started blindly; a run waiting for a
// decision waits again); those that cannot (no checkpoint) are failed, not
// re-run: the agent may already have acted. Then the pending runs recorded before the
// stop are dispatched. A fire recorded but not yet dispatched when the
// process died therefore runs exactly once.
func (e *Tasks) Recover(ctx context.Context) error {
	// On a cluster only the runs no live server holds (store.FailOrphanedRuns).
	n, err := e.db.FailOrphanedRuns(ctx, "interrupted: the server stopped while this run was in progress")
	if err != nil {
		return fmt.Errorf("task scheduler recover: %w", err)
	}
	if n > 0 {
		e.log.Warn("task runs interrupted by the last stop marked failed", "count", n)
	}
	if _, err := e.ResumeInterrupted(ctx); err != nil {
		return fmt.Errorf("task scheduler recover: %w", err)
	}
	_, err = e.Dispatch(ctx)
	return err
}

// ResumeInterrupted hands the executor again, with Run.Resume, every task
// run cut by a stop, a crash or a dead server that left a checkpoint and
// that no live server holds (store.TryHoldRun). A resumed run takes its
// task's slot and its org's like any run, beyond the org's limit (it had
// one when it was cut). It returns how many it resumed.
func (e *Tasks) ResumeInterrupted(ctx context.Context) (int, error) {
	if e.base.Err() != nil {
		return 0, nil
	}
	runs, err := e.db.FindInterruptedRuns(ctx, 500)
	if err != nil {
		return 0, err
	}
	e.dispatchMu.Lock()
	defer e.dispatchMu.Unlock()
	n := 0
	for _, p := range runs {
		if e.taskBusy[p.Task.ID] {
			continue // executing here
		}
		release, ok, err := e.db.TryHoldRun(ctx, p.Session.ID)
		if err != nil {
			return n, err
		}
		if !ok {
			continue // live on another server
		}
		e.taskBusy[p.Task.ID] = true
		e.orgRunning[p.Task.OrgID]++
		e.log.Info("resuming an interrupted task run", "task_id", p.Task.ID, "session_id", p.Session.ID, "trigger", p.Session.TriggerSource)
		e.wg.Add(1)
		go e.run(p, true, release)
		n++
	}
	return n, nil
}
