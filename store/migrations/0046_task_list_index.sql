-- The task list filters on org and project and pages by creation time (ties
-- by id). tasks_project (project_id, created_at) left the org check and the
-- id tie-break to the table rows: the page's total read every task row of the
-- project and the page sorted its ties. This index answers the total from
-- the index alone and walks the default order directly.
CREATE INDEX tasks_scope_created ON tasks(org_id, project_id, created_at, id);
