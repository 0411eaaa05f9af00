-- Issue 27: the time a task stays paused while a step waits out a spent budget (an agent of a plan, a template node,
-- the decomposition, a research phase) is not counted against its deadline, as a checkpoint's pause is not.
-- `in_step_paused_at`: when the first step of the pause began to wait; the resume adds the time since then to
-- `in_step_pause_ms` and clears it. Kept on the task row, which every model call's reservation reads, so that the
-- step's re-run after the resume (or a replay after a crash) allows for it.
ALTER TABLE tasks
  ADD COLUMN in_step_paused_at timestamptz,
  ADD COLUMN in_step_pause_ms bigint NOT NULL DEFAULT 0;
