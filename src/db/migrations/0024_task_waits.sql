-- Issue 27: one durable wait. A task waiting for a named signal ('pause', 'approval:<id>', later a plan review or a
-- swarm's human message) holds a row here from when the wait opens until the signal is delivered, in the same
-- transaction as what the signal brings. While any row holds it, a task whose workflow parked stays parked; the
-- delivery wakes it (task-state/waits.ts). Rows of a task go when it ends.
CREATE TABLE task_waits (
  task_id uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  signal text NOT NULL,
  opened_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, signal)
);

-- The waits open now: paused tasks, and tasks with an undecided approval.
INSERT INTO task_waits (task_id, signal)
  SELECT id, 'pause' FROM tasks WHERE pause_requested AND status IN ('QUEUED', 'RUNNING', 'PAUSED');
INSERT INTO task_waits (task_id, signal)
  SELECT a.task_id, 'approval:' || a.id FROM approvals a JOIN tasks t ON t.id = a.task_id
  WHERE a.status = 'pending' AND t.status IN ('QUEUED', 'RUNNING', 'PAUSED');
