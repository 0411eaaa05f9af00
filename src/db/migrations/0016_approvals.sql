-- Human approvals (reference §3.2): a task whose plan needs one waits, parked, until its owner decides or
-- the approval expires (denied with feedback `approval timeout`). Every change to a row is made under its
-- task's row lock, the lock the workflow parks under, so a decision and a park never miss each other.
CREATE TABLE approvals (
  id              uuid PRIMARY KEY,
  task_id         uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  tenant_id       uuid NOT NULL REFERENCES tenants(id),
  user_id         uuid NOT NULL REFERENCES users(id),
  status          text NOT NULL CHECK (status IN ('pending', 'approved', 'denied')),
  reason          text NOT NULL,
  action          jsonb NOT NULL,
  modified_action jsonb,
  feedback        text,
  decided_by      text,
  created_at      timestamptz NOT NULL DEFAULT now(),
  expires_at      timestamptz NOT NULL,
  decided_at      timestamptz
);
CREATE INDEX approvals_owner_status_created ON approvals (tenant_id, user_id, status, created_at DESC, id DESC);
CREATE INDEX approvals_task ON approvals (task_id);
CREATE INDEX approvals_pending_expiry ON approvals (expires_at) WHERE status = 'pending';
