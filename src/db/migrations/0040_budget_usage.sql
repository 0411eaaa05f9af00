-- What a model call's reservation is checked against (src/workflows/agent-calls/token-budget.ts): the token budgets of
-- the task and its session and the task's cost budget, with what each has used: its usage rows plus what calls in
-- flight have set aside, but for p_except_call_key's own reservation. A session's rows include its own calls (the
-- title), which no task has. STABLE: it reads with its caller's snapshot (the settlement relies on that).
CREATE FUNCTION budget_usage(p_task_id uuid, p_except_call_key text)
RETURNS TABLE (task_budget bigint, session_budget bigint, task_used bigint, session_used bigint, cost_budget float8, cost_used float8)
LANGUAGE sql STABLE AS $$
  SELECT t.token_budget, s.token_budget,
    (SELECT coalesce(sum(u.total_tokens), 0)::int8 FROM usage_records u WHERE u.task_id = t.id)
      + (SELECT coalesce(sum(r.tokens), 0)::int8 FROM token_reservations r
         WHERE r.task_id = t.id AND r.call_key IS DISTINCT FROM p_except_call_key),
    (SELECT coalesce(sum(u.total_tokens), 0)::int8 FROM usage_records u WHERE u.session_id = s.id)
      + (SELECT coalesce(sum(r.tokens), 0)::int8 FROM token_reservations r
         WHERE r.session_id = s.id AND r.call_key IS DISTINCT FROM p_except_call_key),
    t.cost_budget_usd::float8,
    (SELECT coalesce(sum(u.cost_usd), 0)::float8 FROM usage_records u WHERE u.task_id = t.id)
      + (SELECT coalesce(sum(r.cost_usd), 0)::float8 FROM token_reservations r
         WHERE r.task_id = t.id AND r.call_key IS DISTINCT FROM p_except_call_key)
  FROM tasks t JOIN sessions s ON s.id = t.session_id
  WHERE t.id = p_task_id
$$;

-- The same read with a snapshot of its own, taken when it runs: a VOLATILE PL/pgSQL function's statements do not
-- share their caller's. Called laterally on a row its statement has just locked (token-budget.ts lockForCall), it
-- counts a reservation that another transaction committed while this one waited for the lock; read in the locking
-- statement's own snapshot, taken before the wait, that reservation would be missed.
CREATE FUNCTION budget_usage_after_lock(p_task_id uuid, p_except_call_key text)
RETURNS TABLE (task_budget bigint, session_budget bigint, task_used bigint, session_used bigint, cost_budget float8, cost_used float8)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  RETURN QUERY SELECT * FROM budget_usage(p_task_id, p_except_call_key);
END;
$$;
