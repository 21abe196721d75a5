-- PostgreSQL twin of migrations/0154_sessions_running_index.sql (same indexes; TestSchemasMatch).
-- The status index took an entry for every queued run and another at each
-- of its three updates (none is HOT: status and last_activity are indexed);
-- the sweeps of runs left running read this partial index of the running
-- sessions instead.
DROP INDEX agent_sessions_status;
CREATE INDEX agent_sessions_running ON agent_sessions(last_activity) WHERE status = 'running';
