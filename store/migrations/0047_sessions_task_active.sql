-- Before starting or recording a task run, the dispatcher asks whether the
-- task already has a pending or running session. With only (task_id)
-- indexed that walked every session the task ever had, and a webhook whose
-- every alert records a session (overlap policy skip) slowed as it received.
-- Only active sessions are in this index, so the question is one seek.
CREATE INDEX agent_sessions_task_active ON agent_sessions(task_id) WHERE status IN ('pending', 'running');
