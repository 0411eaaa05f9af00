-- Issue 34: signed webhooks, delivered durably. A subscription names a URL, the events it wants and optionally a
-- task or session; a task submitted with `webhook_url` gets one of its own (task_webhook).
CREATE TABLE webhook_subscriptions (
  id                          uuid PRIMARY KEY,
  tenant_id                   uuid NOT NULL REFERENCES tenants(id),
  user_id                     uuid NOT NULL REFERENCES users(id),
  url                         text NOT NULL,
  events                      text[] NOT NULL,
  task_id                     uuid REFERENCES tasks(id) ON DELETE CASCADE,
  session_id                  text,
  description                 text NOT NULL DEFAULT '',
  -- Made for one task by its submission's webhook_url (at most one per task, so a retried submission adds none).
  task_webhook                boolean NOT NULL DEFAULT false,
  secret                      text NOT NULL,
  -- After a rotation the old secret still signs (a second signature) until it expires.
  previous_secret             text,
  previous_secret_expires_at  timestamptz,
  enabled                     boolean NOT NULL DEFAULT true,
  disabled_reason             text,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  updated_at                  timestamptz NOT NULL DEFAULT now(),
  deleted_at                  timestamptz
);
CREATE INDEX webhook_subscriptions_tenant ON webhook_subscriptions (tenant_id, created_at DESC) WHERE deleted_at IS NULL;
CREATE UNIQUE INDEX webhook_subscriptions_task_webhook ON webhook_subscriptions (task_id) WHERE task_webhook;

-- One event for one subscription: the body is fixed when the event happens, so every attempt (and a replay) sends
-- the same bytes under the same webhook-id. `round` counts replays; each round is its own durable workflow.
CREATE TABLE webhook_deliveries (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  subscription_id  uuid NOT NULL REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  tenant_id        uuid NOT NULL,
  event_type       text NOT NULL,
  body             text NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed', 'abandoned')),
  round            integer NOT NULL DEFAULT 1,
  -- Null until a process started the round's workflow (start-deliveries.ts); a crash before that leaves it null.
  started_round    integer,
  next_attempt_at  timestamptz,
  last_error       text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  finished_at      timestamptz
);
CREATE INDEX webhook_deliveries_unstarted ON webhook_deliveries (created_at) WHERE status = 'pending' AND started_round IS DISTINCT FROM round;
CREATE INDEX webhook_deliveries_subscription ON webhook_deliveries (subscription_id, created_at DESC);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (finished_at) WHERE status <> 'pending';

CREATE TABLE webhook_attempts (
  delivery_id  uuid NOT NULL REFERENCES webhook_deliveries(id) ON DELETE CASCADE,
  attempt      integer NOT NULL,
  round        integer NOT NULL,
  started_at   timestamptz NOT NULL,
  duration_ms  integer NOT NULL,
  status_code  integer,
  error        text,
  PRIMARY KEY (delivery_id, attempt)
);

-- The outbox: a delivery row for each subscription that wants the event, written by the transaction that makes the
-- event happen (triggers below), so no crash can lose it or record it without its cause.
CREATE FUNCTION enqueue_webhook_event(p_tenant_id uuid, p_task_id uuid, p_session_id uuid, p_type text, p_data jsonb)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_external_id text;
BEGIN
  IF p_session_id IS NOT NULL THEN
    SELECT external_id INTO v_external_id FROM sessions WHERE id = p_session_id;
  END IF;
  INSERT INTO webhook_deliveries (subscription_id, tenant_id, event_type, body)
  SELECT s.id, p_tenant_id, p_type,
         jsonb_build_object('type', p_type, 'timestamp', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', p_data)::text
  FROM webhook_subscriptions s
  WHERE s.tenant_id = p_tenant_id AND s.enabled AND s.deleted_at IS NULL AND p_type = ANY (s.events)
    AND (s.task_id IS NULL OR s.task_id = p_task_id)
    AND (s.session_id IS NULL OR s.session_id = p_session_id::text OR s.session_id = v_external_id);
END;
$$;

-- A task reaching a terminal status, by whichever path (the workflow, a cancel while queued, an expired approval).
CREATE FUNCTION webhook_task_ended() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM enqueue_webhook_event(NEW.tenant_id, NEW.id, NEW.session_id,
    CASE NEW.status WHEN 'COMPLETED' THEN 'task.completed' WHEN 'FAILED' THEN 'task.failed'
                    WHEN 'CANCELLED' THEN 'task.cancelled' ELSE 'task.timed_out' END,
    jsonb_build_object('task_id', NEW.id, 'session_id', NEW.session_id, 'status', NEW.status,
                       'result', NEW.result, 'error', NEW.error, 'completed_at', NEW.completed_at));
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_task_ended AFTER UPDATE OF status ON tasks FOR EACH ROW
  WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT'))
  EXECUTE FUNCTION webhook_task_ended();

-- Events of a running task that ask something of a person or warn of spend. A step re-run after a crash does not
-- insert its event again (dedupe keys), so it enqueues nothing twice.
CREATE FUNCTION webhook_task_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_task tasks%ROWTYPE;
BEGIN
  SELECT * INTO v_task FROM tasks WHERE id = NEW.task_id;
  PERFORM enqueue_webhook_event(v_task.tenant_id, v_task.id, v_task.session_id,
    CASE NEW.type WHEN 'APPROVAL_REQUESTED' THEN 'approval.requested' WHEN 'RESEARCH_PLAN_READY' THEN 'review.plan_ready'
                  ELSE 'budget.threshold' END,
    jsonb_build_object('task_id', v_task.id, 'session_id', v_task.session_id, 'status', v_task.status,
                       'event', jsonb_build_object('type', NEW.type, 'seq', NEW.seq, 'agent_id', NEW.agent_id,
                                                   'message', NEW.message, 'payload', NEW.payload)));
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_task_event AFTER INSERT ON task_events FOR EACH ROW
  WHEN (NEW.type IN ('APPROVAL_REQUESTED', 'RESEARCH_PLAN_READY', 'BUDGET_THRESHOLD'))
  EXECUTE FUNCTION webhook_task_event();

-- A schedule pausing, by its owner, by a run over budget, or by its key's revocation.
CREATE FUNCTION webhook_schedule_paused() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  PERFORM enqueue_webhook_event(NEW.tenant_id, NULL, NULL, 'schedule.paused',
    jsonb_build_object('schedule_id', NEW.id, 'name', NEW.name, 'reason', NEW.pause_reason, 'paused_at', NEW.paused_at));
  RETURN NULL;
END;
$$;
CREATE TRIGGER webhook_schedule_paused AFTER UPDATE OF status ON schedules FOR EACH ROW
  WHEN (OLD.status = 'ACTIVE' AND NEW.status = 'PAUSED')
  EXECUTE FUNCTION webhook_schedule_paused();
