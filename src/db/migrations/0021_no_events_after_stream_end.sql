-- STREAM_END is a task's last event. Once it is stored, store_task_events drops whatever is appended to the task
-- afterwards, in the same append or later: a hand-over notice for a task cancelled meanwhile, a token delta that
-- lost the race with the answer, a step of an execution that another worker displaced. Streams close at
-- STREAM_END, so such an event would reach no live client and would sit after the end in every replay.
ALTER TABLE task_event_cursors ADD COLUMN stream_ended boolean NOT NULL DEFAULT false;

UPDATE task_event_cursors c SET stream_ended = true
WHERE EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = c.task_id AND e.type = 'STREAM_END');

CREATE OR REPLACE FUNCTION store_task_events(p_task_id uuid, p_events jsonb, p_now_ms bigint)
RETURNS SETOF task_events
LANGUAGE plpgsql AS $$
DECLARE
  v_cursor task_event_cursors%ROWTYPE;
  v_event jsonb;
  v_ms bigint;
  v_n integer;
  v_seq integer;
  v_ended boolean;
BEGIN
  PERFORM 1 FROM tasks WHERE id = p_task_id FOR KEY SHARE;
  INSERT INTO task_event_cursors (task_id) VALUES (p_task_id) ON CONFLICT (task_id) DO NOTHING;
  SELECT * INTO v_cursor FROM task_event_cursors WHERE task_id = p_task_id FOR UPDATE;
  v_seq := v_cursor.last_seq;
  v_ended := v_cursor.stream_ended;
  v_ms := GREATEST(v_cursor.last_ms, p_now_ms);
  v_n := CASE WHEN v_ms > v_cursor.last_ms THEN -1 ELSE v_cursor.last_n END;
  FOR v_event IN SELECT value FROM jsonb_array_elements(p_events) LOOP
    EXIT WHEN v_ended;
    IF v_event->>'dedupe_key' IS NOT NULL AND EXISTS (
      SELECT 1 FROM task_events WHERE task_id = p_task_id AND dedupe_key = v_event->>'dedupe_key'
    ) THEN
      CONTINUE;
    END IF;
    v_seq := v_seq + 1;
    v_n := v_n + 1;
    v_ended := v_event->>'type' = 'STREAM_END';
    RETURN QUERY INSERT INTO task_events (task_id, seq, stream_id, type, agent_id, message, payload, dedupe_key)
      VALUES (p_task_id, v_seq, v_ms || '-' || v_n, v_event->>'type', v_event->>'agent_id', v_event->>'message',
              v_event->'payload', v_event->>'dedupe_key')
      RETURNING *;
  END LOOP;
  IF v_seq > v_cursor.last_seq THEN
    UPDATE task_event_cursors SET last_seq = v_seq, last_ms = v_ms, last_n = v_n, stream_ended = v_ended WHERE task_id = p_task_id;
  END IF;
END;
$$;
