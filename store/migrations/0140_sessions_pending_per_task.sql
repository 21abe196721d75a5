-- The scheduler's dispatch asks for the oldest pending run of each task (a
-- task runs one at a time, so only that one can start). Reading every pending
-- run instead cost a scan of the whole queue per dispatch: under an alert
-- storm on a queueing task the queue grows by every delivery and the scan
-- (up to 2,000 rows joined to their runs and tasks, many times a second) was
-- most of PostgreSQL's CPU per ingested event. This index holds only pending
-- sessions, by task and age: each task's oldest is one seek, and the next
-- task with a pending run another (store/taskrun.go, FindPendingRuns).
-- Building it reads agent_sessions once; the table is not rewritten.
CREATE INDEX agent_sessions_pending ON agent_sessions(task_id, created_at, id) WHERE status = 'pending';
