-- A running agent turn's checkpoint (issue 34): written at every step boundary in the same
-- transaction as the step's events (the transcript so far goes to session_transcripts), so a
-- turn cut by a restart, a kill -9 or a dead node resumes from its last completed step.
-- state is the runner's JSON (the turn's spec, its counters, the change-capable call in flight);
-- resumes counts how often the turn was resumed, to stop one that keeps being interrupted.
-- The row exists only while the turn runs: ending the turn deletes it in the same transaction.
CREATE TABLE run_checkpoints (
	session_id TEXT PRIMARY KEY REFERENCES agent_sessions(id) ON DELETE CASCADE,
	state TEXT NOT NULL,
	resumes INTEGER NOT NULL DEFAULT 0,
	created_at TEXT NOT NULL,
	updated_at TEXT NOT NULL
);
