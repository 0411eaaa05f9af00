-- Grouped event writes: a process gathers the appends of all its tasks and writes them in one transaction,
-- with one notification (src/events/group-commit.ts).
--
-- store_task_events is the body of append_task_events (migration 0007, same lock order: the task row FOR KEY
-- SHARE, then its event cursor FOR UPDATE) without the notification, so that a batch notifies once.
CREATE OR REPLACE FUNCTION store_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
RETURNS SETOF task_events
LANGUAGE plpgsql AS $$
DECLARE
  v_cursor task_event_cursors%ROWTYPE;
  v_event jsonb;
  v_ms bigint;
  v_n integer;
  v_seq integer;
BEGIN
  PERFORM 1 FROM tasks WHERE id = p_task_id FOR KEY SHARE;
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
  IF v_seq > v_cursor.last_seq THEN
    UPDATE task_event_cursors SET last_seq = v_seq, last_ms = v_ms, last_n = v_n WHERE task_id = p_task_id;
  END IF;
END;
$$;

-- Still used inside task state changes (src/task-state/change-task.ts), one task per transaction.
CREATE OR REPLACE FUNCTION append_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
RETURNS SETOF task_events
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM store_task_events(p_task_id, p_events, p_now_ms);
  IF FOUND THEN
    PERFORM pg_notify('agentgate_task_events', p_task_id::text);
  END IF;
END;
$$;

-- p_entries: [{task_id, events: [...]}, ...]. Returns every stored event with the index of its entry.
--
-- Entries are taken in task id order (then submission order), so concurrent batches, from this process or
-- another, lock cursors in the same order and cannot deadlock; a task's entries keep their order, so its seqs
-- follow submission order. One entry that fails (a missing task, a bad value) fails the whole statement: the
-- caller then splits the batch until the failure is isolated to its own entry, so that each gets its own
-- outcome without paying for a subtransaction per entry on every batch (more than 64 in one transaction
-- would also slow down every other session's snapshots). A bad value may even fail the jsonb cast of the
-- parameter, before any per-entry handling in here could run.
--
-- p_async_partials: a batch of token deltas only (LLM_PARTIAL) commits without waiting for the WAL flush.
-- Decided here, from the events themselves, so that no other event can ever be committed that way. The loss
-- window this opens on a crash of Postgres is described in docs/decisions.md (grouped event writes).
--
-- The woken task ids go out as one notification, newline-separated, split below pg_notify's 8000-byte limit.
CREATE OR REPLACE FUNCTION append_task_event_batch(p_entries jsonb, p_now_ms bigint, p_async_partials boolean)
RETURNS TABLE (entry integer, task_id uuid, seq integer, stream_id text, type text, agent_id text, message text,
               payload jsonb, dedupe_key text, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  v_entry record;
  v_woken uuid[] := '{}';
  v_task uuid;
  v_payload text := '';
BEGIN
  IF p_async_partials AND NOT EXISTS (
    SELECT 1 FROM jsonb_array_elements(p_entries) AS e(value), jsonb_array_elements(e.value->'events') AS ev(value)
    WHERE ev.value->>'type' IS DISTINCT FROM 'LLM_PARTIAL'
  ) THEN
    PERFORM set_config('synchronous_commit', 'off', true);
  END IF;
  FOR v_entry IN
    SELECT (e.ordinality - 1)::integer AS n, (e.value->>'task_id')::uuid AS id, e.value->'events' AS events
    FROM jsonb_array_elements(p_entries) WITH ORDINALITY AS e(value, ordinality)
    ORDER BY 2, 1
  LOOP
    RETURN QUERY SELECT v_entry.n, s.task_id, s.seq, s.stream_id, s.type, s.agent_id, s.message, s.payload, s.dedupe_key, s.created_at
      FROM store_task_events(v_entry.id, v_entry.events, p_now_ms) AS s;
    IF FOUND AND v_woken[cardinality(v_woken)] IS DISTINCT FROM v_entry.id THEN
      v_woken := v_woken || v_entry.id;
    END IF;
  END LOOP;
  FOREACH v_task IN ARRAY v_woken LOOP
    IF length(v_payload) + 37 >= 8000 THEN
      PERFORM pg_notify('agentgate_task_events', v_payload);
      v_payload := '';
    END IF;
    v_payload := CASE WHEN v_payload = '' THEN v_task::text ELSE v_payload || E'\n' || v_task::text END;
  END LOOP;
  IF v_payload <> '' THEN
    PERFORM pg_notify('agentgate_task_events', v_payload);
  END IF;
END;
$$;
