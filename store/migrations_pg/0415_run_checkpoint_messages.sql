-- A running turn's transcript so far, one row per message (issue 34): a checkpoint appends the
-- messages added since the last one (and rewrites from the first one that changed, when the loop
-- compacted its history) instead of the whole transcript, whose rewriting at every step grew with
-- the square of the run's length (BENCHMARKS.md "Checkpoint cost of a long run"). The rows exist
-- only while the turn runs, like its run_checkpoints row: ending the turn writes the transcript
-- to session_transcripts and deletes them in the same transaction.
CREATE TABLE run_checkpoint_messages (
	session_id TEXT NOT NULL REFERENCES agent_sessions(id) ON DELETE CASCADE,
	idx INTEGER NOT NULL,
	message TEXT NOT NULL,
	PRIMARY KEY (session_id, idx)
);
