import type { TaskEvent } from '../events/append-event.ts';
import { withPayloadWhenPresent } from '../events/event-record.ts';
import { roundUsd } from '../llm/cost.ts';
import type { SessionSummaryRow, SessionTaskRow } from './queries.ts';
import { titleFromQuery } from '../workflows/memory/title-text.ts';

const ACTIVE_WITHIN_MS = 24 * 60 * 60 * 1000;
const NEAR_BUDGET_LIMIT = 0.9;

/** A session with its computed fields (spec 2.9); rates are 0 for a session without tasks. */
export function toSessionView(row: SessionSummaryRow, nowMs = Date.now()) {
  const tokensUsed = Number(row.tokens_used);
  const tokenBudget = Number(row.token_budget);
  const totalCost = roundUsd(row.total_cost_usd);
  const utilization = tokenBudget > 0 ? tokensUsed / tokenBudget : 0;
  return {
    session_id: row.id,
    external_id: row.external_id,
    user_id: row.user_id,
    title: row.title ?? (row.first_task_query === null ? '' : titleFromQuery(row.first_task_query)),
    context: row.title === null ? row.context : { ...row.context, title: row.title },
    token_budget: tokenBudget,
    tokens_used: tokensUsed,
    task_count: row.task_count,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    last_activity_at: row.last_activity_at.toISOString(),
    latest_task_query: row.latest_task_query,
    latest_task_status: row.latest_task_status,
    first_task_mode: row.first_task_mode,
    successful_tasks: row.successful_tasks,
    failed_tasks: row.failed_tasks,
    total_cost_usd: totalCost,
    cost_usd: totalCost,
    average_cost_per_task: row.task_count > 0 ? roundUsd(totalCost / row.task_count) : 0,
    success_rate: row.task_count > 0 ? row.successful_tasks / row.task_count : 0,
    budget_utilization: utilization,
    budget_remaining: Math.max(0, tokenBudget - tokensUsed),
    is_near_budget_limit: utilization > NEAR_BUDGET_LIMIT,
    is_active: nowMs - row.last_activity_at.getTime() < ACTIVE_WITHIN_MS,
    is_research_session: row.is_research_session,
    research_strategy: row.research_strategy,
  };
}

/** Task history item (spec 2.8). */
export function toHistoryItem(row: SessionTaskRow) {
  return {
    task_id: row.id,
    workflow_id: row.id,
    query: row.query,
    status: row.status,
    started_at: (row.started_at ?? row.created_at).toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    duration_ms: row.started_at && row.completed_at ? row.completed_at.getTime() - row.started_at.getTime() : null,
    error_message: row.error,
    metadata: row.metadata,
    mode: row.mode,
    result: row.result,
    agents_used: row.agents_used,
    tools_invoked: row.tools_invoked,
    total_tokens: Number(row.total_tokens),
    total_cost_usd: roundUsd(row.total_cost_usd),
  };
}

/** A page that stopped before the end, early or not, says where the next one starts. */
export function toPageEnd(nextOffset: number, total: number) {
  return nextOffset < total ? { has_more: true, next_offset: nextOffset } : { has_more: false, next_offset: null };
}

/** One turn of the session events view: the task, its answer and its events without token deltas. */
export function toTurn(row: SessionTaskRow, turn: number, events: TaskEvent[], nowMs = Date.now()) {
  const started = row.started_at?.getTime();
  return {
    turn,
    task_id: row.id,
    user_query: row.query,
    final_output: row.result || events.find((event) => event.type === 'LLM_OUTPUT')?.message || '',
    timestamp: (row.started_at ?? row.created_at).toISOString(),
    events: events.map(withPayloadWhenPresent),
    metadata: {
      tokens_used: Number(row.total_tokens),
      execution_time_ms: started === undefined ? 0 : Math.max(0, (row.completed_at?.getTime() ?? nowMs) - started),
      agents_involved: [...new Set(events.map((event) => event.agent_id).filter((agent) => agent !== null))].sort(),
    },
  };
}
