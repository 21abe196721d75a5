-- agent_sessions_status (status, created_at) was the scheduler's way to its
-- pending runs; agent_sessions_pending (0140) serves that now, and the only
-- other readers of a status across projects are the sweeps of runs left
-- running (at start, and every 30 s on a cluster), which want the few running
-- sessions by last activity. The status index took an entry for every
-- session and another at each of its status changes (a run's start, progress
-- and end each rewrite the row's index entries: status and last_activity
-- change, so no update is HOT on PostgreSQL): one of eight index inserts per
-- queued run and per update, for an index of every session ever. This one
-- holds the running sessions only. Its readers spell 'running' out: a partial
-- index serves a literal, not a bound value (store/taskrun.go,
-- store/cluster_runs.go). Building it reads agent_sessions once.
DROP INDEX agent_sessions_status;
CREATE INDEX agent_sessions_running ON agent_sessions(last_activity) WHERE status = 'running';
