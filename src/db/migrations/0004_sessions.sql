-- Summaries of the older middle of a session's conversation (context compression, issue 5). Later turns
-- reuse the newest one: it stands for every message up to and including (through_task_id, through_part),
-- where part 0 is that task's query and part 1 its answer. Keyed by the turn that made it, so a re-run of
-- that turn's step replaces its row instead of adding one.
CREATE TABLE session_summaries (
  task_id             uuid PRIMARY KEY REFERENCES tasks(id),
  session_id          uuid NOT NULL REFERENCES sessions(id),
  summary             text NOT NULL,
  through_task_id     uuid NOT NULL REFERENCES tasks(id),
  through_part        smallint NOT NULL CHECK (through_part IN (0, 1)),
  summarized_messages integer NOT NULL,
  created_at          timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX session_summaries_session ON session_summaries (session_id, created_at DESC);
