-- Finished tool calls of agents (issue 14, scope 5). `call_key` is the agent's step key and the call's index
-- in its loop: when the step runs again after a crash, a call with the same key, tool and input returns the
-- output recorded here instead of running the tool a second time.
CREATE TABLE tool_calls (
  task_id     uuid NOT NULL REFERENCES tasks(id) ON DELETE CASCADE,
  call_key    text NOT NULL,
  tool        text NOT NULL,
  input       jsonb NOT NULL,
  output      jsonb,
  error       text,
  cost_usd    numeric(14, 8) NOT NULL DEFAULT 0,
  duration_ms integer NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (task_id, call_key)
);
