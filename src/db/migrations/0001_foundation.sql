-- Tenants and users. Authentication (issue 6) extends these tables; the development
-- tenant and user below are the identity every request runs as while auth is skipped.
CREATE TABLE tenants (
  id          uuid PRIMARY KEY,
  name        text NOT NULL,
  slug        text NOT NULL UNIQUE,
  plan        text NOT NULL DEFAULT 'free',
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE users (
  id          uuid PRIMARY KEY,
  tenant_id   uuid NOT NULL REFERENCES tenants(id),
  email       text NOT NULL UNIQUE,
  name        text,
  role        text NOT NULL DEFAULT 'member' CHECK (role IN ('owner', 'admin', 'member')),
  created_at  timestamptz NOT NULL DEFAULT now()
);

INSERT INTO tenants (id, name, slug) VALUES ('00000000-0000-0000-0000-000000000001', 'Development', 'dev');
INSERT INTO users (id, tenant_id, email, name, role)
VALUES ('00000000-0000-0000-0000-000000000002', '00000000-0000-0000-0000-000000000001', 'dev@localhost', 'Developer', 'owner');

CREATE TABLE sessions (
  id           uuid PRIMARY KEY,
  tenant_id    uuid NOT NULL REFERENCES tenants(id),
  user_id      uuid NOT NULL REFERENCES users(id),
  external_id  text,
  title        text,
  context      jsonb NOT NULL DEFAULT '{}',
  token_budget bigint NOT NULL,
  created_at   timestamptz NOT NULL DEFAULT now(),
  updated_at   timestamptz NOT NULL DEFAULT now(),
  expires_at   timestamptz,
  deleted_at   timestamptz,
  deleted_by   uuid
);
CREATE UNIQUE INDEX sessions_owner_external_id ON sessions (tenant_id, user_id, external_id)
  WHERE external_id IS NOT NULL AND deleted_at IS NULL;
CREATE INDEX sessions_owner_created ON sessions (tenant_id, user_id, created_at DESC);

-- One row per task; the task id is also its DBOS workflow id.
CREATE TABLE tasks (
  id               uuid PRIMARY KEY,
  tenant_id        uuid NOT NULL REFERENCES tenants(id),
  user_id          uuid NOT NULL REFERENCES users(id),
  session_id       uuid NOT NULL REFERENCES sessions(id),
  query            text NOT NULL,
  requested_mode   text,
  mode             text,
  context          jsonb NOT NULL DEFAULT '{}',
  options          jsonb NOT NULL DEFAULT '{}',
  status           text NOT NULL CHECK (status IN ('QUEUED', 'RUNNING', 'PAUSED', 'COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT')),
  result           text,
  error            text,
  metadata         jsonb NOT NULL DEFAULT '{}',
  complexity_score double precision,
  agents_used      integer NOT NULL DEFAULT 0,
  model_used       text,
  provider         text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  started_at       timestamptz,
  completed_at     timestamptz,
  updated_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX tasks_owner_created ON tasks (tenant_id, user_id, created_at DESC, id DESC);
CREATE INDEX tasks_session_created ON tasks (session_id, created_at);
CREATE INDEX tasks_unfinished ON tasks (created_at) WHERE status IN ('QUEUED', 'RUNNING');

-- One row per model call. call_key is stable across a step's re-execution after a crash,
-- so a retried call replaces its row instead of adding a second one.
CREATE TABLE usage_records (
  id            bigserial PRIMARY KEY,
  call_key      text NOT NULL UNIQUE,
  task_id       uuid NOT NULL REFERENCES tasks(id),
  tenant_id     uuid NOT NULL,
  user_id       uuid NOT NULL,
  session_id    uuid NOT NULL,
  agent_id      text NOT NULL,
  provider      text NOT NULL,
  model         text NOT NULL,
  input_tokens  integer NOT NULL,
  output_tokens integer NOT NULL,
  total_tokens  integer NOT NULL,
  cost_usd      numeric(14, 8) NOT NULL,
  created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX usage_records_task ON usage_records (task_id);
CREATE INDEX usage_records_session ON usage_records (session_id);

-- Task events: seq is gap-free per task, stream_id is <ms>-<n> and strictly increasing per task.
CREATE TABLE task_events (
  task_id     uuid NOT NULL REFERENCES tasks(id),
  seq         integer NOT NULL,
  stream_id   text NOT NULL,
  type        text NOT NULL,
  agent_id    text,
  message     text,
  payload     jsonb,
  dedupe_key  text,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, seq)
);
CREATE UNIQUE INDEX task_events_dedupe ON task_events (task_id, dedupe_key) WHERE dedupe_key IS NOT NULL;

-- The event cursor of each task, locked per append so seq stays gap-free under concurrency.
CREATE TABLE task_event_cursors (
  task_id      uuid PRIMARY KEY REFERENCES tasks(id),
  last_seq     integer NOT NULL DEFAULT 0,
  last_ms      bigint NOT NULL DEFAULT 0,
  last_n       integer NOT NULL DEFAULT 0
);

-- Cached first 2xx answers of POST requests sent with an Idempotency-Key.
CREATE TABLE idempotency_records (
  scope_hash       text PRIMARY KEY,
  idempotency_key  text NOT NULL,
  state            text NOT NULL CHECK (state IN ('in_progress', 'completed')),
  status_code      integer,
  headers          jsonb,
  body             text,
  created_at       timestamptz NOT NULL DEFAULT now(),
  expires_at       timestamptz NOT NULL
);
CREATE INDEX idempotency_records_expiry ON idempotency_records (expires_at);

-- Appends a batch of events to one task in a single round trip. The cursor row lock serialises
-- appends per task, so seq has no gaps and stream ids (<ms>-<n>) strictly increase. Events whose
-- dedupe_key is already recorded (a step re-run after a crash) are skipped without using a seq.
CREATE FUNCTION append_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
RETURNS SETOF task_events
LANGUAGE plpgsql AS $$
DECLARE
  v_cursor task_event_cursors%ROWTYPE;
  v_event jsonb;
  v_ms bigint;
  v_n integer;
  v_seq integer;
BEGIN
  INSERT INTO task_event_cursors (task_id) VALUES (p_task_id) ON CONFLICT (task_id) DO NOTHING;
  SELECT * INTO v_cursor FROM task_event_cursors WHERE task_id = p_task_id FOR UPDATE;
  v_seq := v_cursor.last_seq;
  v_ms := GREATEST(v_cursor.last_ms, p_now_ms);
  v_n := CASE WHEN v_ms > v_cursor.last_ms THEN -1 ELSE v_cursor.last_n END;
  FOR v_event IN SELECT value FROM jsonb_array_elements(p_events) LOOP
    IF v_event->>'dedupe_key' IS NOT NULL AND EXISTS (
      SELECT 1 FROM task_events WHERE task_id = p_task_id AND dedupe_key = v_event->>'dedupe_key'
    ) THEN
      CONTINUE;
    END IF;
    v_seq := v_seq + 1;
    v_n := v_n + 1;
    RETURN QUERY INSERT INTO task_events (task_id, seq, stream_id, type, agent_id, message, payload, dedupe_key)
      VALUES (p_task_id, v_seq, v_ms || '-' || v_n, v_event->>'type', v_event->>'agent_id', v_event->>'message',
              v_event->'payload', v_event->>'dedupe_key')
      RETURNING *;
  END LOOP;
  UPDATE task_event_cursors SET last_seq = v_seq, last_ms = v_ms, last_n = GREATEST(v_n, 0)
    WHERE task_id = p_task_id AND v_seq > v_cursor.last_seq;
END;
$$;
