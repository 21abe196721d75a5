package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
)

// A group commit reads each of its webhooks and each target task of its
// inline dispatch once. With sixteen busy webhooks that was up to
// thirty-two statements per commit, a few percent of the writer; these
// read them in one statement per chunk of ids. A webhook not found is not
// live (deleted meanwhile), as before; a task not found (deleted, or of
// another project) is still read the old way (txStmts.task), which
// answers NotFound as before.

const (
	prefetchHooksHead = `SELECT w.task_id, (w.enabled <> 0 AND t.enabled <> 0), w.updated_at,
	EXISTS (SELECT 1 FROM webhook_rules r WHERE r.task_id = w.task_id)
	FROM webhooks w JOIN tasks t ON t.id = w.task_id WHERE w.task_id IN (`
	prefetchTasksHead = `SELECT ` + taskCols + ` FROM tasks WHERE id IN (`
	// queryTaskActiveRunID for several tasks: the first row of each task is
	// the one its LIMIT 1 finds (the same partial index, walked per task).
	// Left to itself SQLite's planner walks the status index, every active
	// session of every task (PostgreSQL's dialect drops INDEXED BY).
	prefetchActiveHead = `SELECT task_id, id FROM agent_sessions INDEXED BY agent_sessions_task_active
	WHERE status IN ('pending', 'running') AND task_id IN (`
	// The same for the target tasks that are enabled and under skip, read
	// with the tasks (PostgreSQL: one round trip for all the prefetch
	// queries, so the active runs cannot wait for the tasks' rows). The
	// batch's snapshot is one: these are the tasks prefetchTasks reads.
	prefetchSkipActiveHead = `SELECT s.task_id, s.id FROM agent_sessions s JOIN tasks t ON t.id = s.task_id
	WHERE t.enabled <> 0 AND t.overlap_policy = 'skip' AND s.status IN ('pending', 'running') AND s.task_id IN (`
)

// inStmts are head's statements by id count (flushChunks).
func inStmts(head string) map[int]string {
	m := map[int]string{}
	for _, n := range flushChunks {
		m[n] = head + strings.TrimSuffix(strings.Repeat("?,", n), ",") + `)`
	}
	return m
}

var (
	prefetchHooksStmts  = inStmts(prefetchHooksHead)
	prefetchTasksStmts  = inStmts(prefetchTasksHead)
	prefetchActiveStmts = inStmts(prefetchActiveHead)
	// prefetchSkipActiveStmts run on PostgreSQL only (prefetchIngest),
	// prepared by the driver as the pipelined queries go (pgDriverConn.prepared).
	prefetchSkipActiveStmts = inStmts(prefetchSkipActiveHead)
)

func init() {
	addIngestStmts(prefetchHooksStmts, prefetchTasksStmts, prefetchActiveStmts)
}

// queryIn runs stmts' statement for ids in chunks, scanning every row.
func (s *txStmts) queryIn(ctx context.Context, stmts map[int]string, ids []string, scan func(*sql.Rows) error) error {
	for len(ids) > 0 {
		n := chunk(len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		if err := s.queryRows(ctx, stmts[n], args, scan); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// queuedQuery is a prefetch query waiting for runQueued.
type queuedQuery struct {
	q    string
	args []any
	scan func(*sql.Rows) error
}

// queueIn queues stmts' statements for ids in chunks (queryIn's).
func (s *txStmts) queueIn(stmts map[int]string, ids []string, scan func(*sql.Rows) error) {
	for len(ids) > 0 {
		n := chunk(len(ids))
		args := make([]any, n)
		for i, id := range ids[:n] {
			args[i] = id
		}
		s.queued = append(s.queued, queuedQuery{stmts[n], args, scan})
		ids = ids[n:]
	}
}

// runQueued runs the queued queries in order, each scanning its rows. On
// PostgreSQL they go in one round trip (pgPipelined): a group commit's
// reads were six or seven round trips on the writer connection before its
// writes, each waking both processes. SQLite runs them one by one, in
// process.
func (s *txStmts) runQueued(ctx context.Context) error {
	qs := s.queued
	s.queued = nil
	if !s.tx.db.pg || len(qs) == 1 {
		for _, q := range qs {
			if err := s.queryRows(ctx, q.q, q.args, q.scan); err != nil {
				return err
			}
		}
		return nil
	}
	if len(qs) == 0 {
		return nil
	}
	texts := make([]string, len(qs))
	var args []any
	for i, q := range qs {
		texts[i] = q.q
		args = append(args, q.args...)
	}
	// Past Tx's hot statements: the joined text is no statement to prepare
	// (the driver prepares each query, already the writer's).
	rows, err := s.tx.Tx.QueryContext(ctx, pgPipelined(texts...), args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for i, q := range qs {
		if i > 0 && !rows.NextResultSet() {
			if err := rows.Err(); err != nil {
				return err
			}
			return errors.New("store: a pipelined query returned no rows")
		}
		for rows.Next() {
			if err := q.scan(rows); err != nil {
				return err
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
	}
	return rows.Close()
}

// queryRows runs the writer's prepared q with args, scanning every row.
func (s *txStmts) queryRows(ctx context.Context, q string, args []any, scan func(*sql.Rows) error) error {
	st, err := s.stmt(ctx, q)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(ctx, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// prefetchIngest fills hooks (by task id) with the batch's webhooks, the
// batch's task cache (txStmts.task) with its inline dispatch's targets and,
// for those under overlap_policy skip, their active run (txStmts.activeRun).
// It runs the batch's queued prefetch queries with its own (runQueued).
func (s *txStmts) prefetchIngest(ctx context.Context, items []IngestItem, hooks map[string]ingestHook) error {
	var hookIDs, taskIDs []string
	seenTask := map[string]bool{}
	for _, it := range items {
		if _, seen := hooks[it.Event.TaskID]; !seen {
			hooks[it.Event.TaskID] = ingestHook{} // absent unless found: a deleted webhook is not live
			hookIDs = append(hookIDs, it.Event.TaskID)
		}
		if it.Plan == nil {
			continue
		}
		for _, t := range it.Plan.Targets {
			if !seenTask[t.TargetTaskID] {
				seenTask[t.TargetTaskID] = true
				taskIDs = append(taskIDs, t.TargetTaskID)
			}
		}
	}
	s.queueIn(prefetchHooksStmts, hookIDs, func(rows *sql.Rows) error {
		var id string
		var h ingestHook
		if err := rows.Scan(&id, &h.live, &h.updatedAt, &h.hasRules); err != nil {
			return err
		}
		hooks[id] = h
		return nil
	})
	var skips []string // enabled tasks under overlap_policy skip: their active run decides (webhookSkip)
	s.queueIn(prefetchTasksStmts, taskIDs, func(rows *sql.Rows) error {
		t, err := scanTask(rows)
		if err != nil {
			return err
		}
		// Keyed as txStmts.task asks: a task of another org or project is
		// simply not found there and is read (and refused) as before.
		s.tasks[t.OrgID+"\x00"+t.ProjectID+"\x00"+t.ID] = t
		s.lastTask = nil // it may name the entry replaced
		if t.Enabled && t.OverlapPolicy == "skip" {
			skips = append(skips, t.ID)
			s.active[t.ID] = "" // none unless found
		}
		return nil
	})
	found := map[string]bool{}
	active := func(rows *sql.Rows) error {
		var task, id string
		if err := rows.Scan(&task, &id); err != nil {
			return err
		}
		if !found[task] {
			found[task] = true
			s.active[task] = id
		}
		return nil
	}
	if s.tx.db.pg {
		// Its rows follow the tasks' (runQueued scans in order).
		s.queueIn(prefetchSkipActiveStmts, taskIDs, active)
		return s.runQueued(ctx)
	}
	if err := s.runQueued(ctx); err != nil {
		return err
	}
	return s.queryIn(ctx, prefetchActiveStmts, skips, active)
}
