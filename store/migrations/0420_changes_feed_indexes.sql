-- The change feed's pages (issue 36: p99 <= 20 ms with 100k changes in a
-- project). Every list is scoped by org and project: with org_id in the
-- index the scope is checked there, not in the table row by row, and the
-- service filter (the console's, an investigation's) walks its own slice
-- of the feed newest first instead of the whole project's.
DROP INDEX changes_project_time;
CREATE INDEX changes_project_time ON changes(project_id, org_id, occurred_at, id);
CREATE INDEX changes_project_service ON changes(project_id, org_id, service, occurred_at, id);
