-- Control state of a task (pause/resume/cancel) and its token budget. The row is the record the
-- HTTP routes change; the workflow reads it at its checkpoints and is woken by an engine message.
ALTER TABLE tasks
  ADD COLUMN pause_requested  boolean NOT NULL DEFAULT false,
  ADD COLUMN paused_at        timestamptz,
  ADD COLUMN pause_reason     text,
  ADD COLUMN paused_by        text,
  ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false,
  ADD COLUMN cancel_reason    text,
  ADD COLUMN cancelled_by     text,
  ADD COLUMN token_budget     bigint;

-- Tokens set aside for model calls in flight, so parallel calls cannot overrun a budget together.
-- Keyed like usage rows: a call re-run after a crash replaces its reservation; settling deletes it.
CREATE TABLE token_reservations (
  call_key    text PRIMARY KEY,
  task_id     uuid NOT NULL REFERENCES tasks(id),
  session_id  uuid NOT NULL REFERENCES sessions(id),
  tokens      integer NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX token_reservations_task ON token_reservations (task_id);
CREATE INDEX token_reservations_session ON token_reservations (session_id);
