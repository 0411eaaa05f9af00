-- Lock order (issue 10): every transaction that touches a task's row and its events takes the task row
-- first, then the event cursor. Task state changes lock the row FOR NO KEY UPDATE before appending; an
-- append takes FOR KEY SHARE on the row before the cursor (the foreign keys of task_events and
-- task_event_cursors would take it anyway, but only after the cursor, which deadlocked against a state
-- change holding the row and waiting for the cursor).
CREATE OR REPLACE FUNCTION append_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
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
    PERFORM pg_notify('agentgate_task_events', p_task_id::text);
  END IF;
END;
$$;
