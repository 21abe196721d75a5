package store

import (
	"context"
	"database/sql"
	"errors"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Task runs: every fire or trigger of a task is one agent session plus one
// task_runs row whose run_key is UNIQUE. Both are written in one transaction
// before anything is dispatched, so a crash either loses nothing (the fire
// is still due) or leaves a pending session that the next start dispatches.

// Session sources and triggers used by tasks.
const (
	SourceTask       = "task"
	TriggerScheduled = "scheduled"
	TriggerManual    = "manual"
	TriggerWebhook   = "webhook"
)

// Fire is one planned scheduler decision for a task that is due.
type Fire struct {
	Task *Task // as read when the fire was planned; its NextRunAt guards the write
	// Run false: the due fires are dropped (missed_fire_policy skip) and only
	// next_run_at moves on.
	Run          bool
	ScheduledFor time.Time
	MissedFires  int // fires not run on time that this run covers (run_once)
	Dropped      int // fires not run at all (missed_fire_policy skip); only logged
	NextRunAt    *time.Time
	// SkipIfActive: overlap_policy skip. When an earlier run of the task is
	// still pending or running, the fire is recorded as a cancelled session.
	SkipIfActive bool
}

// FireResult says what recording a fire did.
type FireResult struct {
	TaskID    string
	SessionID string // "" when nothing was recorded
	Status    string // pending, or cancelled when the overlap policy skipped it
	Stale     bool   // the task changed since planning; nothing written
}

// RunKeyScheduled is the exactly-once key of a scheduled fire.
func RunKeyScheduled(taskID string, at time.Time) string { return "sched:" + taskID + ":" + TS(at) }

// RecordFires writes fires in one transaction. Each fire first moves the
// task's next_run_at from the value it was planned with (compare-and-swap),
// so a task edited or disabled meanwhile is left alone, and inserts its run
// key, so the same fire is never recorded twice.
func (db *DB) RecordFires(ctx context.Context, fires []Fire) ([]FireResult, error) {
	var out []FireResult
	err := db.Write(ctx, func(tx *Tx) error {
		out = out[:0]
		for _, f := range fires {
			r, err := recordFireTx(ctx, tx, f)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	return out, err
}

func recordFireTx(ctx context.Context, tx *Tx, f Fire) (FireResult, error) {
	t := f.Task
	res := FireResult{TaskID: t.ID}
	upd, err := tx.ExecContext(ctx, `UPDATE tasks SET next_run_at = ? WHERE id = ? AND enabled = 1 AND next_run_at = ?`,
		nullTS(f.NextRunAt), t.ID, nullTS(t.NextRunAt))
	if err != nil {
		return res, err
	}
	if n, _ := upd.RowsAffected(); n == 0 {
		res.Stale = true
		return res, nil
	}
	if !f.Run {
		return res, nil
	}
	key := RunKeyScheduled(t.ID, f.ScheduledFor)
	if s, err := findRunByKey(ctx, tx, t.OrgID, key); err == nil {
		res.SessionID, res.Status = s.ID, s.Status
		return res, nil
	} else if !IsNotFound(err) {
		return res, err
	}
	status, reason := SessionPending, ""
	if f.MissedFires > 0 {
		reason = "catch-up run for fires missed while the scheduler was stopped"
	}
	if f.SkipIfActive {
		active, err := taskHasActiveRun(ctx, tx, t.ID)
		if err != nil {
			return res, err
		}
		if active {
			status, reason = SessionCancelled, "skipped: the previous run was still in progress (overlap_policy skip)"
		}
	}
	s, err := recordRunTx(ctx, tx, t, key, TriggerScheduled, status, reason, "", &f.ScheduledFor, f.MissedFires)
	if err != nil {
		return res, err
	}
	res.SessionID, res.Status = s.ID, s.Status
	return res, nil
}

// queryTaskActiveRun names the statuses literally: only then can SQLite use
// the partial index agent_sessions_task_active (0047), whose WHERE must be
// implied by the query's.
const queryTaskActiveRun = `SELECT 1 FROM agent_sessions WHERE task_id = ? AND status IN ('pending', 'running') LIMIT 1`

func taskHasActiveRun(ctx context.Context, q Querier, taskID string) (bool, error) {
	var one int
	err := q.QueryRowContext(ctx, queryTaskActiveRun, taskID).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return err == nil, err
}

const insertTaskRun = `INSERT INTO task_runs (session_id, task_id, org_id, run_key, scheduled_for, missed_fires, created_at)
		VALUES (?,?,?,?,?,?,?)`

func recordRunTx(ctx context.Context, tx *Tx, t *Task, key, trigger, status, reason, createdBy string, scheduledFor *time.Time, missed int) (*AgentSession, error) {
	s := &AgentSession{OrgID: t.OrgID, ProjectID: t.ProjectID, Title: t.Name, FirstPrompt: t.Prompt, TaskID: t.ID,
		TaskName: t.Name, AgentType: t.AgentType, Source: SourceTask, TriggerSource: trigger, Status: status,
		Reason: reason, CreatedBy: createdBy}
	if err := CreateAgentSessionTx(ctx, tx, s); err != nil {
		return nil, err
	}
	_, err := tx.ExecContext(ctx, insertTaskRun, s.ID, t.ID, t.OrgID, key, nullTS(scheduledFor), missed, TS(tx.Now))
	if isUnique(err) {
		return nil, Errorf(EConflict, "this run was already recorded")
	}
	return s, err
}

func findRunByKey(ctx context.Context, q Querier, orgID, key string) (*AgentSession, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT session_id FROM task_runs WHERE run_key = ? AND org_id = ?`, key, orgID).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, NotFound("run")
	}
	if err != nil {
		return nil, err
	}
	return findAgentSession(ctx, q, orgID, id)
}

// TriggerTask records a manual run of a task. With an idempotency key the
// same key always answers the same run (replay true) and never records a
// second one. A disabled task is refused with a conflict (code task_disabled).
// Manual runs are queued behind a run still in progress whatever the
// overlap policy: someone asked for this one explicitly.
func (db *DB) TriggerTask(ctx context.Context, orgID, projectID, taskID, idemKey, userID string) (s *AgentSession, replay bool, err error) {
	err = db.Write(ctx, func(tx *Tx) error {
		t, err := findTask(ctx, tx, orgID, projectID, taskID)
		if err != nil {
			return err
		}
		key := ""
		if idemKey != "" {
			key = "manual:" + taskID + ":" + idemKey
			if s, err = findRunByKey(ctx, tx, orgID, key); err == nil {
				replay = true
				return nil
			} else if !IsNotFound(err) {
				return err
			}
		}
		if !t.Enabled {
			return &Error{Code: EConflict, Message: "task is disabled; enable it before triggering a run", Reason: "task_disabled"}
		}
		if key == "" {
			key = "manual:" + taskID + ":" + NewID()
		}
		s, err = recordRunTx(ctx, tx, t, key, TriggerManual, SessionPending, "", userID, nil, 0)
		return err
	})
	return s, replay, err
}

// PendingRun is a recorded run waiting for a dispatch slot, with the task
// settings its execution needs.
type PendingRun struct {
	Session      AgentSession
	Task         Task
	ScheduledFor *time.Time
	MissedFires  int
	// Input is what started a webhook run (the alert, from the session's
	// first prompt); "" for other triggers. It is untrusted data.
	Input string
}

// queryPendingHeads lists the oldest pending run of each task. A task runs
// one at a time, so the dispatcher can start no other of its runs in one
// pass; reading the whole queue instead scanned every queued run per
// dispatch, and a queueing webhook under an alert storm queues one run per
// delivery. The recursion walks the tasks that have a pending session, one
// seek each in agent_sessions_pending (migration 0140); each step also picks
// the previous task's oldest pending session that is a task run (head).
// 'pending' is written out, not bound: a partial index serves only a
// literal. INDEXED BY holds SQLite to that index (without statistics it took
// agent_sessions_status, since dropped, and scanned the queue again); PostgreSQL's spelling
// drops it (pgRewrites).
const queryPendingHeads = `WITH RECURSIVE queued(task_id, head) AS (
		SELECT MIN(task_id), NULL FROM agent_sessions INDEXED BY agent_sessions_pending WHERE status = 'pending'
		UNION ALL
		SELECT (SELECT MIN(a.task_id) FROM agent_sessions a INDEXED BY agent_sessions_pending
				WHERE a.status = 'pending' AND a.task_id > queued.task_id),
			(SELECT p.id FROM agent_sessions p INDEXED BY agent_sessions_pending
				WHERE p.status = 'pending' AND p.task_id = queued.task_id
				AND EXISTS (SELECT 1 FROM task_runs q WHERE q.session_id = p.id) ORDER BY p.created_at, p.id LIMIT 1)
		FROM queued WHERE queued.task_id IS NOT NULL)
	SELECT head FROM queued WHERE head IS NOT NULL`

// pendingRunChunk heads are read per query by queryPendingRunsByID (unused
// places hold ”): a list of keys, not a join with the recursion, whose
// row estimate made PostgreSQL hash-join whole tables. The status (a run may
// have started since the heads were read) is checked here, not in SQL:
// with the condition PostgreSQL also walked agent_sessions_status (dropped in 0154) over the
// whole queue (BitmapAnd) on its stale estimate of the pending count.
const pendingRunChunk = 32

const pendingRunCols = `SELECT r.scheduled_for, r.missed_fires, t.id, t.org_id, t.project_id, t.name,
		t.description, t.prompt, t.agent_type, t.schedule, t.timezone, t.overlap_policy, t.timeout_seconds, t.max_steps,
		t.max_cost_usd, s.id, s.trigger_source, s.created_by, s.created_at,
		CASE WHEN s.trigger_source = 'webhook' THEN s.first_prompt ELSE '' END, s.status
		FROM agent_sessions s JOIN task_runs r ON r.session_id = s.id JOIN tasks t ON t.id = r.task_id`

var queryPendingRunsByID = pendingRunCols + `
		WHERE s.id IN (` + pendingRunIDs + `) AND r.session_id IN (` + pendingRunIDs + `)`

// pendingRunSingles: up to this many heads (a few tasks with queued runs, the
// usual case) are read one by one by queryPendingRunByID, an equality on
// both keys, which every planner serves with the two primary keys. With the
// padded IN list PostgreSQL hash-joined a seq scan of task_runs while that
// table was small (it costs 32-element lists too cheaply): 0.6-0.9 ms a
// dispatch at a few hundred runs, growing until ~1,500 (the first minutes
// of a fresh database under an alert storm; 9-17 µs per ingested event in
// the PostgreSQL ingest bench).
var pendingRunSingles = 4 // a variable for the test of both paths

const queryPendingRunByID = pendingRunCols + `
		WHERE s.id = ?1 AND r.session_id = ?1`

// pendingRunIDs are the chunk's numbered placeholders, named twice above so
// that both keyed tables are read by key (?NNN is $NNN on PostgreSQL).
var pendingRunIDs = func() string {
	var b strings.Builder
	for i := 1; i <= pendingRunChunk; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		b.WriteString("?" + strconv.Itoa(i))
	}
	return b.String()
}()

// FindPendingRuns returns the oldest pending run of each task that has one,
// up to limit, oldest first. A later run of a task is returned once the runs
// before it left pending (the dispatcher runs again when a run ends).
func (db *DB) FindPendingRuns(ctx context.Context, limit int) ([]PendingRun, error) {
	rows, err := db.readRows(ctx, queryPendingHeads)
	if err != nil {
		return nil, err
	}
	var heads []any
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		heads = append(heads, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []PendingRun
	if len(heads) <= pendingRunSingles {
		for _, h := range heads {
			if out, err = db.pendingRunsByID(ctx, queryPendingRunByID, []any{h}, out); err != nil {
				return nil, err
			}
		}
		heads = nil
	}
	for len(heads) > 0 {
		chunk := make([]any, pendingRunChunk)
		n := copy(chunk, heads)
		for i := n; i < len(chunk); i++ {
			chunk[i] = ""
		}
		heads = heads[n:]
		if out, err = db.pendingRunsByID(ctx, queryPendingRunsByID, chunk, out); err != nil {
			return nil, err
		}
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].Session, out[j].Session
		return a.CreatedAt.Before(b.CreatedAt) || a.CreatedAt.Equal(b.CreatedAt) && a.ID < b.ID
	})
	if len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

func (db *DB) pendingRunsByID(ctx context.Context, query string, ids []any, out []PendingRun) ([]PendingRun, error) {
	rows, err := db.readRows(ctx, query, ids...)
	if err != nil {
		return nil, err
	}
	return scanRunsInStatus(rows, SessionPending, out)
}

// scanRunsInStatus reads pendingRunCols rows, keeping those in status want.
func scanRunsInStatus(rows *sql.Rows, want string, out []PendingRun) ([]PendingRun, error) {
	defer rows.Close()
	for rows.Next() {
		var p PendingRun
		var sched, createdBy sql.NullString
		var created, status string
		t := &p.Task
		if err := rows.Scan(&sched, &p.MissedFires, &t.ID, &t.OrgID, &t.ProjectID, &t.Name, &t.Description, &t.Prompt,
			&t.AgentType, &t.Schedule, &t.Timezone, &t.OverlapPolicy, &t.TimeoutSeconds, &t.MaxSteps, &t.MaxCostUSD,
			&p.Session.ID, &p.Session.TriggerSource, &createdBy, &created, &p.Input, &status); err != nil {
			return nil, err
		}
		if status != want {
			continue
		}
		p.ScheduledFor = scanNullTS(sched)
		p.Session.OrgID, p.Session.ProjectID, p.Session.TaskID, p.Session.Status = t.OrgID, t.ProjectID, t.ID, want
		p.Session.CreatedBy, p.Session.CreatedAt = createdBy.String, ParseTS(created)
		out = append(out, p)
	}
	return out, rows.Err()
}

// A run's start and end mirrored onto its task; callers use only the error
// (PostgreSQL sends them with the COMMIT: pgDeferrable).
const (
	updateTaskRunStarted = `UPDATE tasks SET last_run_at = ?, last_status = ?, last_session_id = ?, last_error = '' WHERE id = ?`
	updateTaskRunEnded   = `UPDATE tasks SET last_status = ?, last_error = ? WHERE id = ? AND last_session_id = ?`
)

// StartTaskRun moves a pending run to running and stamps the task's last
// run; false means another dispatcher (or a delete) got there first.
// (FinishTaskRun and the dispatcher's StartTaskRuns: taskrun_group.go.)
func (db *DB) StartTaskRun(ctx context.Context, sessionID, taskID string) (bool, error) {
	ok, err := db.StartTaskRuns(ctx, []RunStart{{SessionID: sessionID, TaskID: taskID}})
	return err == nil && ok[0], err
}

// queryInterruptedRuns spells 'running' out: agent_sessions_running is a
// partial index (migration 0154), which serves a literal, not a bound value.
// A run that left a checkpoint (a wait for a decision included) is not
// failed: it resumes from its checkpoint (FindInterruptedRuns).
const queryInterruptedRuns = `SELECT s.id, r.task_id FROM agent_sessions s JOIN task_runs r ON r.session_id = s.id
	WHERE s.status = 'running' AND ` + notResumable

// notResumable: a running task run s that cannot resume from a checkpoint.
// A run waiting for a decision is resumable when its wait left a checkpoint
// (runner: saveTaskWait); older waits left none.
const notResumable = `NOT EXISTS (SELECT 1 FROM run_checkpoints c WHERE c.session_id = s.id)`

// FailInterruptedRuns marks task runs left running by a stopped process,
// and that cannot resume, as failed with reason: those that never
// checkpointed (a wait for a decision recorded before waits were
// checkpointed among them). They are not run again: the agent may already have acted.
// The others resume from their last completed step (FindInterruptedRuns).
func (db *DB) FailInterruptedRuns(ctx context.Context, reason string) (int, error) {
	var n int
	err := db.Write(ctx, func(tx *Tx) error {
		rows, err := tx.QueryContext(ctx, queryInterruptedRuns)
		if err != nil {
			return err
		}
		type pair struct{ sid, tid string }
		var ps []pair
		for rows.Next() {
			var p pair
			if err := rows.Scan(&p.sid, &p.tid); err != nil {
				rows.Close()
				return err
			}
			ps = append(ps, p)
		}
		rows.Close()
		for _, p := range ps {
			if _, err := transitionAgentSessionTx(ctx, tx, p.sid, SessionTransition{From: SessionRunning, To: SessionFailed, Reason: reason}); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, updateTaskRunEnded, SessionFailed, reason, p.tid, p.sid); err != nil {
				return err
			}
		}
		n = len(ps)
		return nil
	})
	return n, err
}

// FindDueTasks returns enabled scheduled tasks whose next fire is at or before now.
func (db *DB) FindDueTasks(ctx context.Context, now time.Time, limit int) ([]Task, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+taskCols+` FROM tasks
		WHERE enabled = 1 AND next_run_at IS NOT NULL AND next_run_at <= ? ORDER BY next_run_at LIMIT ?`, TS(now), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *t)
	}
	return out, rows.Err()
}

// FindTaskRuns lists the runs (sessions) of one task, newest first.
func (db *DB) FindTaskRuns(ctx context.Context, orgID, taskID string, limit int) ([]AgentSession, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT `+agentSessionCols+` FROM agent_sessions WHERE task_id = ? AND org_id = ?
		ORDER BY created_at DESC, id DESC LIMIT ?`, taskID, orgID, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []AgentSession
	for rows.Next() {
		s, err := scanAgentSession(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *s)
	}
	return out, rows.Err()
}
