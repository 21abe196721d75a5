-- Counted quotas (issue 16) read one row instead of counting an org's rows
-- inside the create transaction: triggers keep the counts of projects,
-- enabled tasks and connectors exact whichever path adds or removes a row
-- (including ON DELETE CASCADE from a project or an org). Members are still
-- counted directly (pending invitations expire with time, and an org's
-- members are few).
CREATE TABLE billing_counts (
	org_id TEXT NOT NULL,
	kind TEXT NOT NULL,
	n INTEGER NOT NULL,
	PRIMARY KEY (org_id, kind)
) WITHOUT ROWID;

INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'projects', count(*) FROM projects GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'enabled_tasks', count(*) FROM tasks WHERE enabled = 1 GROUP BY org_id;
INSERT INTO billing_counts (org_id, kind, n) SELECT org_id, 'connectors', count(*) FROM connectors GROUP BY org_id;

CREATE TRIGGER billing_projects_ins AFTER INSERT ON projects BEGIN
	INSERT OR IGNORE INTO billing_counts (org_id, kind, n) VALUES (NEW.org_id, 'projects', 0);
	UPDATE billing_counts SET n = n + 1 WHERE org_id = NEW.org_id AND kind = 'projects';
END;
CREATE TRIGGER billing_projects_del AFTER DELETE ON projects BEGIN
	UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'projects';
END;

CREATE TRIGGER billing_tasks_ins AFTER INSERT ON tasks WHEN NEW.enabled BEGIN
	INSERT OR IGNORE INTO billing_counts (org_id, kind, n) VALUES (NEW.org_id, 'enabled_tasks', 0);
	UPDATE billing_counts SET n = n + 1 WHERE org_id = NEW.org_id AND kind = 'enabled_tasks';
END;
CREATE TRIGGER billing_tasks_del AFTER DELETE ON tasks WHEN OLD.enabled BEGIN
	UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'enabled_tasks';
END;
CREATE TRIGGER billing_tasks_upd AFTER UPDATE OF enabled ON tasks WHEN OLD.enabled != NEW.enabled BEGIN
	INSERT OR IGNORE INTO billing_counts (org_id, kind, n) VALUES (NEW.org_id, 'enabled_tasks', 0);
	UPDATE billing_counts SET n = n + (CASE WHEN NEW.enabled THEN 1 ELSE -1 END) WHERE org_id = NEW.org_id AND kind = 'enabled_tasks';
END;

CREATE TRIGGER billing_connectors_ins AFTER INSERT ON connectors BEGIN
	INSERT OR IGNORE INTO billing_counts (org_id, kind, n) VALUES (NEW.org_id, 'connectors', 0);
	UPDATE billing_counts SET n = n + 1 WHERE org_id = NEW.org_id AND kind = 'connectors';
END;
CREATE TRIGGER billing_connectors_del AFTER DELETE ON connectors BEGIN
	UPDATE billing_counts SET n = n - 1 WHERE org_id = OLD.org_id AND kind = 'connectors';
END;

CREATE TRIGGER billing_counts_org_del AFTER DELETE ON organizations BEGIN
	DELETE FROM billing_counts WHERE org_id = OLD.id;
END;
