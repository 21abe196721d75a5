-- A run the plan's monthly caps refused before it called the model is kept
-- as a failed session (the person sees why) but is no run for metering or
-- for the cap: 1 marks it.
ALTER TABLE agent_sessions ADD COLUMN unmetered INTEGER NOT NULL DEFAULT 0;
