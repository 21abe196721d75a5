-- PostgreSQL twin of migrations/0155_incident_keys_by_incident.sql (TestSchemasMatch):
-- a resolve deletes an incident's keys by project and incident, which the
-- primary key (project_id, key, incident_id) serves only by the project.
CREATE INDEX incident_keys_incident ON incident_keys(incident_id);
