-- Issue 30 (hot path, round 2): the submission returns the task row it stored, and whether it created it, so a
-- workflow started on arrival in the same process begins from that row instead of reading it again (one round
-- trip fewer before a simple task's first token; workflows/runtime/submitted-rows.ts). The body is 0008's;
-- submit_task keeps its signature for processes of the version before, and runs this one.
CREATE OR REPLACE FUNCTION submit_task_row(
  p_tenant_id uuid, p_user_id uuid, p_session_id uuid, p_external_id text, p_new_session_id uuid,
  p_session_budget bigint, p_ttl_days integer, p_session_context jsonb,
  p_task_id uuid, p_query text, p_requested_mode text, p_context jsonb, p_options jsonb, p_token_budget bigint)
RETURNS TABLE (task tasks, created boolean)
LANGUAGE plpgsql AS $$
#variable_conflict use_column
DECLARE
  v_session_id uuid;
  v_expires_at timestamptz := now() + make_interval(days => p_ttl_days);
BEGIN
  RETURN QUERY SELECT t, false FROM tasks t
    WHERE t.id = p_task_id AND t.tenant_id = p_tenant_id AND t.user_id = p_user_id;
  IF FOUND THEN
    RETURN;
  END IF;
  IF p_external_id IS NOT NULL THEN
    UPDATE sessions s SET deleted_at = s.expires_at
      WHERE s.tenant_id = p_tenant_id AND s.user_id = p_user_id AND s.external_id = p_external_id
        AND s.deleted_at IS NULL AND s.expires_at <= now();
    INSERT INTO sessions AS s (id, tenant_id, user_id, external_id, token_budget, expires_at, context)
      VALUES (p_new_session_id, p_tenant_id, p_user_id, p_external_id, p_session_budget, v_expires_at, p_session_context)
      ON CONFLICT (tenant_id, user_id, external_id) WHERE external_id IS NOT NULL AND deleted_at IS NULL
      DO UPDATE SET updated_at = now(), expires_at = excluded.expires_at
      RETURNING s.id INTO v_session_id;
  ELSE
    INSERT INTO sessions AS s (id, tenant_id, user_id, token_budget, expires_at, context)
      VALUES (coalesce(p_session_id, p_new_session_id), p_tenant_id, p_user_id, p_session_budget, v_expires_at, p_session_context)
      ON CONFLICT (id) DO UPDATE SET updated_at = now(), expires_at = excluded.expires_at
        WHERE s.tenant_id = p_tenant_id AND s.user_id = p_user_id
          AND s.deleted_at IS NULL AND (s.expires_at IS NULL OR s.expires_at > now())
      RETURNING s.id INTO v_session_id;
    IF v_session_id IS NULL THEN
      INSERT INTO sessions (id, tenant_id, user_id, token_budget, expires_at, context)
        VALUES (p_new_session_id, p_tenant_id, p_user_id, p_session_budget, v_expires_at, p_session_context);
      v_session_id := p_new_session_id;
    END IF;
  END IF;
  RETURN QUERY INSERT INTO tasks AS t (id, tenant_id, user_id, session_id, query, requested_mode, context, options, token_budget, status)
    VALUES (p_task_id, p_tenant_id, p_user_id, v_session_id, p_query, p_requested_mode, p_context, p_options, p_token_budget, 'QUEUED')
    ON CONFLICT (id) DO NOTHING
    RETURNING t, true;
  IF NOT FOUND THEN
    RETURN QUERY SELECT t, false FROM tasks t
      WHERE t.id = p_task_id AND t.tenant_id = p_tenant_id AND t.user_id = p_user_id;
  END IF;
END;
$$;

CREATE OR REPLACE FUNCTION submit_task(
  p_tenant_id uuid, p_user_id uuid, p_session_id uuid, p_external_id text, p_new_session_id uuid,
  p_session_budget bigint, p_ttl_days integer, p_session_context jsonb,
  p_task_id uuid, p_query text, p_requested_mode text, p_context jsonb, p_options jsonb, p_token_budget bigint)
RETURNS TABLE (session_id uuid, created_at timestamptz)
LANGUAGE sql AS $$
  SELECT (r.task).session_id, (r.task).created_at FROM submit_task_row(p_tenant_id, p_user_id, p_session_id, p_external_id,
    p_new_session_id, p_session_budget, p_ttl_days, p_session_context, p_task_id, p_query, p_requested_mode, p_context,
    p_options, p_token_budget) r
$$;
