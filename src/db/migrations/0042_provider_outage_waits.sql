-- Issue 30: a task's model call whose every candidate failed for a passing reason (overloaded, 5xx, timed out) parks
-- its task and is tried again later instead of failing it. The wait is a timed one: `due_at` says when a sweep
-- delivers its signal (task-state/waits.ts). `model_call_outages` remembers when such a call first failed, so it
-- gives up PROVIDER_OUTAGE_WAIT_SECONDS later, across parks and restarts.
ALTER TABLE task_waits ADD COLUMN due_at timestamptz;
CREATE INDEX task_waits_due ON task_waits (due_at) WHERE due_at IS NOT NULL;

CREATE TABLE model_call_outages (
  call_key text PRIMARY KEY,
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  since timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX model_call_outages_task ON model_call_outages (task_id);
