-- Session titles leave the task's path (issue 13): a completed task names the task whose query the title is
-- generated from, and a background titler of the worker processes generates it. Its model usage belongs to
-- the session, not to the task, so a usage row may have no task.
ALTER TABLE usage_records ALTER COLUMN task_id DROP NOT NULL;
ALTER TABLE sessions ADD COLUMN title_from_task uuid;
CREATE INDEX sessions_awaiting_title ON sessions (updated_at) WHERE title IS NULL AND title_from_task IS NOT NULL;
