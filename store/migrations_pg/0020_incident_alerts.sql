-- PostgreSQL twin of migrations/0020_incident_alerts.sql (same tables, columns, constraints and indexes; TestSchemasMatch).
-- The distinct alerts (fingerprints) of each incident, so alert_count counts
-- alerts rather than summing the alerts of every delivery (Alertmanager
-- re-sends a group's alerts with each notification). event_count keeps
-- counting deliveries.
CREATE TABLE incident_alerts (
	incident_id TEXT NOT NULL REFERENCES incidents(id) ON DELETE CASCADE,
	fingerprint TEXT NOT NULL,
	PRIMARY KEY (incident_id, fingerprint)
);
