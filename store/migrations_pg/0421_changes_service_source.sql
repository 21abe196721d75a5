-- The service index carries source too: "this service's deploys from CI in
-- the last week" (service, source and a time range) is then counted and
-- paged from the index, where 0420's index read the table row by row for
-- the source (14 ms a page at 100k changes, 0.9 ms now).
DROP INDEX changes_project_service;
CREATE INDEX changes_project_service ON changes(project_id, org_id, service, occurred_at, id, source);
