import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { findSessionIdForFilter } from '../sessions/find-session.ts';
import { countTasks, findOwnedTask, listTasks, usageBreakdown, type TaskListRow } from './queries.ts';
import type { ListTasksQuery } from './schemas.ts';
import { parseStatusFilter, toExecutionModeName, toStatusName } from './status-names.ts';
import { roundUsd } from '../llm/cost.ts';
import { toTaskView } from './task-view.ts';

export async function getTaskView(deps: Deps, caller: Caller, taskId: string) {
  const task = await findOwnedTask(deps.db, caller, taskId);
  return toTaskView(task, await usageBreakdown(deps.db, taskId), deps.config.budgets.taskTokens);
}

export async function listTaskSummaries(deps: Deps, caller: Caller, query: Static<typeof ListTasksQuery>) {
  const status = query.status === undefined || query.status === '' ? undefined : parseStatusFilter(query.status);
  const filter = { limit: query.limit, offset: query.offset, status, sessionId: undefined as string | undefined };
  if (query.session_id !== undefined) {
    const sessionId = await findSessionIdForFilter(deps.db, caller, query.session_id);
    if (!sessionId) return { tasks: [], total_count: 0 };
    filter.sessionId = sessionId;
  }
  const [rows, total] = await Promise.all([listTasks(deps.db, caller, filter), countTasks(deps.db, caller, filter)]);
  return { tasks: rows.map(toTaskSummary), total_count: total };
}

function toTaskSummary(row: TaskListRow) {
  return {
    task_id: row.id,
    query: row.query,
    status: toStatusName(row.status),
    mode: toExecutionModeName(row.mode),
    created_at: row.created_at.toISOString(),
    completed_at: row.completed_at?.toISOString() ?? null,
    total_token_usage: row.total_tokens === null ? null : {
      total_tokens: row.total_tokens,
      prompt_tokens: row.input_tokens ?? 0,
      completion_tokens: row.output_tokens ?? 0,
      cost_usd: roundUsd(row.cost_usd ?? 0),
    },
  };
}
