-- PostgreSQL twin of migrations/0081_billing_counts.sql (same table; TestSchemasMatch). SQLite's
-- trigger bodies become plpgsql trigger functions with the same effect: the counts of projects,
-- enabled tasks and connectors stay exact whichever path adds or removes a row (ON DELETE CASCADE
-- included: PostgreSQL fires row triggers for cascaded deletes too).
-- An increment is one upsert: two servers adding an org's first project at once cannot both
-- insert the row (SQLite's INSERT OR IGNORE + UPDATE relied on its single writer). A decrement
-- only updates, as on SQLite: after an org's delete removed its counts, the cascaded deletes of
-- its projects must not bring them back.
CREATE TABLE billing_counts (
	org_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	n BIGINT NOT NULL,
	PRIMARY KEY (org_id, kind)
);

INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'projects', count(*) FROM projects GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'enabled_tasks', count(*) FROM tasks WHERE enabled = 1 GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'connectors', count(*) FROM connectors GROUP BY org_id;

-- billing_count_add(org, kind, delta): the shared body of the triggers below.
CREATE FUNCTION billing_count_add(p_org TEXT, p_kind TEXT, p_delta BIGINT) RETURNS void AS $$
BEGIN
	IF p_delta > 0 THEN
		INSERT INTO billing_counts (org_id, kind, n) VALUES (p_org, p_kind, p_delta)
			ON CONFLICT (org_id, kind) DO UPDATE SET n = billing_counts.n + EXCLUDED.n;
	ELSE
		UPDATE billing_counts SET n = n + p_delta WHERE org_id = p_org AND kind = p_kind;
	END IF;
END;
$$ LANGUAGE plpgsql;

-- TG_ARGV[0] is the count's kind.
CREATE FUNCTION billing_count_ins() RETURNS trigger AS $$
BEGIN
	PERFORM billing_count_add(NEW.org_id, TG_ARGV[0], 1);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION billing_count_del() RETURNS trigger AS $$
BEGIN
	PERFORM billing_count_add(OLD.org_id, TG_ARGV[0], -1);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;

-- SQLite's billing_tasks_upd: when enabled flips, the row is made if missing, then moved by one
-- (so a disable, too, may make it, as SQLite's INSERT OR IGNORE + UPDATE did).
CREATE FUNCTION billing_tasks_upd() RETURNS trigger AS $$
BEGIN
	IF NEW.enabled <> 0 THEN
		PERFORM billing_count_add(NEW.org_id, 'enabled_tasks', 1);
	ELSE
		INSERT INTO billing_counts (org_id, kind, n) VALUES (NEW.org_id, 'enabled_tasks', -1)
			ON CONFLICT (org_id, kind) DO UPDATE SET n = billing_counts.n - 1;
	END IF;
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE FUNCTION billing_counts_org_del() RETURNS trigger AS $$
BEGIN
	DELETE FROM billing_counts WHERE org_id = OLD.org_id;
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER billing_projects_ins AFTER INSERT ON projects
	FOR EACH ROW EXECUTE FUNCTION billing_count_ins('projects');
CREATE TRIGGER billing_projects_del AFTER DELETE ON projects
	FOR EACH ROW EXECUTE FUNCTION billing_count_del('projects');

CREATE TRIGGER billing_tasks_ins AFTER INSERT ON tasks
	FOR EACH ROW WHEN (NEW.enabled <> 0) EXECUTE FUNCTION billing_count_ins('enabled_tasks');
CREATE TRIGGER billing_tasks_del AFTER DELETE ON tasks
	FOR EACH ROW WHEN (OLD.enabled <> 0) EXECUTE FUNCTION billing_count_del('enabled_tasks');
CREATE TRIGGER billing_tasks_upd AFTER UPDATE OF enabled ON tasks
	FOR EACH ROW WHEN (OLD.enabled <> NEW.enabled) EXECUTE FUNCTION billing_tasks_upd();

CREATE TRIGGER billing_connectors_ins AFTER INSERT ON connectors
	FOR EACH ROW EXECUTE FUNCTION billing_count_ins('connectors');
CREATE TRIGGER billing_connectors_del AFTER DELETE ON connectors
	FOR EACH ROW EXECUTE FUNCTION billing_count_del('connectors');

CREATE TRIGGER billing_counts_org_del AFTER DELETE ON organizations
	FOR EACH ROW EXECUTE FUNCTION billing_counts_org_del();
