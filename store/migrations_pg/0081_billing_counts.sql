-- PostgreSQL twin of migrations/0081_billing_counts.sql: the same table, and
-- the same counts kept by triggers (PL/pgSQL functions here).
CREATE TABLE billing_counts (
	org_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (org_id, kind)
);

INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'projects', count(*) FROM projects GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'enabled_tasks', count(*) FROM tasks WHERE enabled = 1 GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'connectors', count(*) FROM connectors GROUP BY org_id;

-- billing_count_add(org, kind, delta): what each SQLite trigger body does.
CREATE FUNCTION billing_count_add(o TEXT, k TEXT, d BIGINT) RETURNS void LANGUAGE sql AS $$
	INSERT INTO billing_counts (org_id, kind, n) VALUES (o, k, 0) ON CONFLICT DO NOTHING;
	UPDATE billing_counts SET n = n + d WHERE org_id = o AND kind = k;
$$;

CREATE FUNCTION billing_projects_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN PERFORM billing_count_add(NEW.org_id, 'projects', 1);
	ELSE UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'projects'; END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER billing_projects_ins AFTER INSERT ON projects FOR EACH ROW EXECUTE FUNCTION billing_projects_count();
CREATE TRIGGER billing_projects_del AFTER DELETE ON projects FOR EACH ROW EXECUTE FUNCTION billing_projects_count();

CREATE FUNCTION billing_tasks_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN
		IF NEW.enabled <> 0 THEN PERFORM billing_count_add(NEW.org_id, 'enabled_tasks', 1); END IF;
	ELSIF TG_OP = 'DELETE' THEN
		IF OLD.enabled <> 0 THEN UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'enabled_tasks'; END IF;
	ELSIF OLD.enabled <> NEW.enabled THEN
		PERFORM billing_count_add(NEW.org_id, 'enabled_tasks', CASE WHEN NEW.enabled <> 0 THEN 1 ELSE -1 END);
	END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER billing_tasks_ins AFTER INSERT ON tasks FOR EACH ROW EXECUTE FUNCTION billing_tasks_count();
CREATE TRIGGER billing_tasks_del AFTER DELETE ON tasks FOR EACH ROW EXECUTE FUNCTION billing_tasks_count();
CREATE TRIGGER billing_tasks_upd AFTER UPDATE OF enabled ON tasks FOR EACH ROW EXECUTE FUNCTION billing_tasks_count();

CREATE FUNCTION billing_connectors_count() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'INSERT' THEN PERFORM billing_count_add(NEW.org_id, 'connectors', 1);
	ELSE UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'connectors'; END IF;
	RETURN NULL;
END $$;
CREATE TRIGGER billing_connectors_ins AFTER INSERT ON connectors FOR EACH ROW EXECUTE FUNCTION billing_connectors_count();
CREATE TRIGGER billing_connectors_del AFTER DELETE ON connectors FOR EACH ROW EXECUTE FUNCTION billing_connectors_count();

CREATE FUNCTION billing_counts_org_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	DELETE FROM billing_counts WHERE org_id = OLD.id;
	RETURN NULL;
END $$;
CREATE TRIGGER billing_counts_org_del AFTER DELETE ON organizations FOR EACH ROW EXECUTE FUNCTION billing_counts_org_gone();
