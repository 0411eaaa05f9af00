-- A notification of new task events names the task and its last seq ("<task id> <seq>", one a line), so that a
-- listener that already holds that seq (this process handed its own appends over in-process, see
-- src/events/task-feed.ts) does not read the log again to find nothing. Other keys on the channel (an
-- idempotency scope, a cancellation) are still notified bare.
CREATE OR REPLACE FUNCTION task_events_notice(p_task_id uuid)
RETURNS text
LANGUAGE sql AS $$
  SELECT p_task_id::text || ' ' || last_seq FROM task_event_cursors WHERE task_id = p_task_id
$$;

CREATE OR REPLACE FUNCTION append_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
RETURNS SETOF task_events
LANGUAGE plpgsql AS $$
BEGIN
  RETURN QUERY SELECT * FROM store_task_events(p_task_id, p_events, p_now_ms);
  IF FOUND THEN
    PERFORM pg_notify('agentgate_task_events', task_events_notice(p_task_id));
  END IF;
END;
$$;

-- As in migration 0014; only the notification's lines changed.
CREATE OR REPLACE FUNCTION append_task_event_batch(p_entries jsonb, p_now_ms bigint, p_async_partials boolean)
RETURNS TABLE (entry integer, task_id uuid, seq integer, stream_id text, type text, agent_id text, message text,
               payload jsonb, dedupe_key text, created_at timestamptz)
LANGUAGE plpgsql AS $$
DECLARE
  v_entry record;
  v_woken uuid[] := '{}';
  v_task uuid;
  v_line text;
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
    v_line := task_events_notice(v_task);
    IF length(v_payload) + length(v_line) + 1 >= 8000 THEN
      PERFORM pg_notify('agentgate_task_events', v_payload);
      v_payload := '';
    END IF;
    v_payload := CASE WHEN v_payload = '' THEN v_line ELSE v_payload || E'\n' || v_line END;
  END LOOP;
  IF v_payload <> '' THEN
    PERFORM pg_notify('agentgate_task_events', v_payload);
  END IF;
END;
$$;
