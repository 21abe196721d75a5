-- An incident's main correlation key (the first key the batch that opened
-- it gave it) on its own row, found through a partial index over the
-- incidents still open, instead of an incident_keys row. In an alert storm
-- of distinct groups every event opens an incident with one key: its
-- incident_keys row was a b-tree insert in the key index, another at the
-- end of incident_keys_incident (page splits) and a foreign-key lookup of
-- the incident. Its other keys (and keys added later) stay in
-- incident_keys; the correlation lookups read both. A resolve drops the
-- key from the index with the status (resolved incidents attract no
-- alerts); incidents stored before keep their keys in incident_keys.
ALTER TABLE incidents ADD COLUMN main_key TEXT;
CREATE INDEX incidents_main_key ON incidents(project_id, main_key) WHERE main_key IS NOT NULL AND status != 'resolved';
