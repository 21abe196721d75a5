-- The change feed's pages (issue 36: p99 <= 20 ms with 100k changes in a
-- project). Every list is scoped by org and project: with org_id in the
-- index the scope is checked there, not in the table row by row. source and
-- label_pairs ride along so that the source and label filters (and the
-- count behind a page) are answered from the index too; the service filter
-- (the console's, an investigation's) walks its own slice of the feed,
-- newest first, instead of the whole project's.
DROP INDEX changes_project_time;
CREATE INDEX changes_project_time ON changes(project_id, org_id, occurred_at, id, source, label_pairs);
CREATE INDEX changes_project_service ON changes(project_id, org_id, service, occurred_at, id);
