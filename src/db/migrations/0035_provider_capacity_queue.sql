-- Issue 30: callers waiting for a provider deployment's capacity, in arrival order (llm/provider-traffic.ts). A task
-- whose call would wait more than PROVIDER_PARK_AFTER_SECONDS parks here (`parked`, with the call's key, stable across
-- a re-run of its step) and is granted capacity in turn by whichever process runs the grant loop, which then wakes
-- it (the `capacity` signal of task_waits). A caller waiting in place holds a row too while it waits, so other
-- tenants' calls see it is waiting (a tenant's share binds only then). Logged, unlike provider_rate_windows: a
-- parked task must survive a crash.
CREATE TABLE provider_capacity_queue (
  seq         bigserial PRIMARY KEY,
  limit_id    text NOT NULL,
  tenant_id   text,
  task_id     uuid REFERENCES tasks(id) ON DELETE CASCADE,
  call_key    text UNIQUE,
  limits      jsonb NOT NULL,
  parked      boolean NOT NULL,
  granted_at  timestamptz,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE INDEX provider_capacity_queue_waiting ON provider_capacity_queue (limit_id, seq) WHERE granted_at IS NULL;
