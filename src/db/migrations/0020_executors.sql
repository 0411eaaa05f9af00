-- Executors (issue 17): one row per process identity. A process claims its identity at start-up (refused while
-- a live process holds it), renews heartbeat_at while it runs, and sets stopped_at when it shuts down cleanly.
-- When the heartbeat lapses, a surviving worker hands the executor's pending workflows to the queue and records
-- it here; a process that finds its row taken over exits rather than run anything a second time.
CREATE TABLE executors (
  id                  text PRIMARY KEY,
  hostname            text NOT NULL,
  pid                 integer NOT NULL,
  role                text NOT NULL,
  started_at          timestamptz NOT NULL DEFAULT now(),
  heartbeat_at        timestamptz NOT NULL DEFAULT now(),
  stopped_at          timestamptz,
  recovered_by        text,
  recovered_at        timestamptz,
  recovered_workflows integer NOT NULL DEFAULT 0
);
