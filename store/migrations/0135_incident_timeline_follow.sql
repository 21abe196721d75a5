-- A dispatched alert's follow-up entries (the run it started, or why none
-- started; an approval) ride on its alert entry's row as a JSON array
-- [{"id","kind","text","data"}], expanded when the timeline is read
-- (FindIncident): one row per alert instead of two, each with its own key,
-- index entries and foreign-key check. NULL: no follow-ups. Adding a
-- nullable column rewrites nothing.
ALTER TABLE incident_timeline ADD COLUMN follow TEXT;
