-- An incident's correlation keys by incident. A provider's "resolved"
-- deletes the incident's keys (transitionIncidentTx: project and incident),
-- and the primary key (project_id, key, incident_id) serves only the
-- project: every resolve walked all the project's keys, one per incident
-- an alert storm opened (200,000 keys: 29 ms a resolve in SQLite's C
-- build), so the resolved notifications after a storm slowed down as the
-- storm had grown. Deleting an incident (ON DELETE CASCADE) looked for its
-- keys the same way. The index's entries arrive in the order incidents are
-- opened (time-ordered ids): appended, not scattered.
CREATE INDEX incident_keys_incident ON incident_keys(incident_id);
