-- Schedules (issue 16, spec 2.10, 3.3, 4.7): a cron expression in a time zone that submits an ordinary task
-- at each of its times. Exactly once: a process fires an occurrence only under the schedule's row lock and
-- only while it is due, advancing next_run_at in the same transaction, and schedule_runs holds one row per
-- (schedule, occurrence) whoever fired it.
CREATE TABLE schedules (
  id                     uuid PRIMARY KEY,
  tenant_id              uuid NOT NULL REFERENCES tenants(id),
  user_id                uuid NOT NULL REFERENCES users(id),
  name                   text NOT NULL,
  description            text NOT NULL DEFAULT '',
  cron_expression        text NOT NULL,
  timezone               text NOT NULL,
  task_query             text NOT NULL,
  task_context           jsonb NOT NULL DEFAULT '{}',
  max_budget_per_run_usd numeric NOT NULL,
  timeout_seconds        integer NOT NULL,
  status                 text NOT NULL CHECK (status IN ('ACTIVE', 'PAUSED')),
  paused_at              timestamptz,
  pause_reason           text,
  -- Null while paused: no run is coming.
  next_run_at            timestamptz,
  last_run_at            timestamptz,
  total_runs             integer NOT NULL DEFAULT 0,
  successful_runs        integer NOT NULL DEFAULT 0,
  failed_runs            integer NOT NULL DEFAULT 0,
  created_at             timestamptz NOT NULL DEFAULT now(),
  updated_at             timestamptz NOT NULL DEFAULT now(),
  deleted_at             timestamptz
);
CREATE INDEX schedules_owner ON schedules (tenant_id, user_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE INDEX schedules_due ON schedules (next_run_at) WHERE status = 'ACTIVE' AND deleted_at IS NULL;

-- A run that started has its task; one that was skipped (missed beyond the catch-up window, superseded by a
-- later occurrence, refused for its owner) has none and says why.
CREATE TABLE schedule_runs (
  schedule_id   uuid NOT NULL REFERENCES schedules(id),
  scheduled_for timestamptz NOT NULL,
  task_id       uuid REFERENCES tasks(id),
  skip_reason   text,
  triggered_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (schedule_id, scheduled_for)
);

-- A scheduled run is a task of its schedule, with the schedule's budget per run in USD.
ALTER TABLE tasks ADD COLUMN schedule_id uuid REFERENCES schedules(id);
ALTER TABLE tasks ADD COLUMN cost_budget_usd numeric;
-- A call in flight sets aside its largest possible cost, as it sets aside tokens.
ALTER TABLE token_reservations ADD COLUMN cost_usd numeric NOT NULL DEFAULT 0;

-- Counters follow the runs' tasks, whichever path ends them (the workflow, a cancel while queued, an expired
-- approval): in the transaction that ends the task, under the task's row lock and then the schedule's.
CREATE FUNCTION count_schedule_run() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  UPDATE schedules SET
    successful_runs = successful_runs + (NEW.status = 'COMPLETED')::int,
    failed_runs = failed_runs + (NEW.status <> 'COMPLETED')::int
  WHERE id = NEW.schedule_id;
  RETURN NULL;
END;
$$;

CREATE TRIGGER tasks_count_schedule_run AFTER UPDATE OF status ON tasks
  FOR EACH ROW
  WHEN (NEW.schedule_id IS NOT NULL
    AND NEW.status IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')
    AND OLD.status NOT IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'))
  EXECUTE FUNCTION count_schedule_run();
