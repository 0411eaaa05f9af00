-- The OpenAI Responses API (issue 31): a response is a task (its workflow, status, answer, usage and event log);
-- this row keeps what the task does not: the request as the client sent it (input items, instructions,
-- parameters echoed back), the response it continues, and whether it may be read back (`store`).
-- The response id is derived from the task id (resp_ + its hex), so no second id is generated or looked up.
CREATE TABLE openai_responses (
  task_id          uuid PRIMARY KEY REFERENCES tasks(id),
  tenant_id        uuid NOT NULL,
  user_id          uuid NOT NULL,
  previous_task_id uuid REFERENCES openai_responses(task_id),
  model            text NOT NULL,
  instructions     text,
  input            jsonb NOT NULL,
  parameters       jsonb NOT NULL DEFAULT '{}',
  background       boolean NOT NULL DEFAULT false,
  stored           boolean NOT NULL DEFAULT true,
  created_at       timestamptz NOT NULL DEFAULT now(),
  deleted_at       timestamptz
);
CREATE INDEX openai_responses_previous ON openai_responses (previous_task_id) WHERE previous_task_id IS NOT NULL;
