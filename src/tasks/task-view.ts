import type { TaskRow } from '../db/schema.ts';
import type { TaskViewBody } from './schemas.ts';
import type { UsageBreakdownRow } from './queries.ts';
import { isTerminal } from '../task-state/statuses.ts';
import { toStatusName } from './status-names.ts';
import { roundUsd } from '../llm/cost.ts';

type OwnedTask = TaskRow & { session_external_id: string | null };

/** GET /api/v1/tasks/{id} (spec 2.5), with `unified_response` (2.6) and the per-model breakdown. */
export function toTaskView(task: OwnedTask, breakdown: UsageBreakdownRow[], defaultBudget: number): TaskViewBody {
  const usage = sumUsage(breakdown);
  const status = toStatusName(task.status);
  const result = task.result ?? '';
  const mode = task.mode ?? task.requested_mode;
  const primary = breakdown[0];
  const sessionId = task.session_external_id ?? task.session_id;
  const unified = {
    task_id: task.id,
    session_id: sessionId,
    status,
    result,
    metadata: {
      model: task.model_used ?? primary?.model ?? null,
      execution_mode: mode,
      complexity_score: task.complexity_score,
      agents_used: task.agents_used,
      ...researchFields(task.metadata),
    },
    usage,
    performance: { execution_time_ms: executionTimeMs(task) },
    stop_reason: isTerminal(task.status) ? task.status.toLowerCase() : null,
    error: task.error,
    timestamp: (task.completed_at ?? task.updated_at).toISOString(),
  };
  const view: TaskViewBody = {
    task_id: task.id,
    workflow_id: task.id,
    status,
    result,
    // Spec 2.5 lists unified_response under metadata as well as at the top level.
    metadata: { ...task.metadata, model_breakdown: toModelBreakdown(breakdown, usage.cost_usd), unified_response: unified },
    error: task.error ?? '',
    created_at: task.created_at.toISOString(),
    updated_at: task.updated_at.toISOString(),
    query: task.query,
    session_id: sessionId,
    context: { ...task.context, ...budgetInfo(task, defaultBudget, usage.total_tokens) },
    mode,
    model_used: task.model_used ?? primary?.model ?? '',
    provider: task.provider ?? primary?.provider ?? '',
    usage: {
      total_tokens: usage.total_tokens,
      input_tokens: usage.input_tokens,
      output_tokens: usage.output_tokens,
      // Of input_tokens, those read from the provider's prompt cache, charged at the cached-input price.
      cached_input_tokens: breakdown.reduce((sum, row) => sum + row.cached_input_tokens, 0),
      // Of input_tokens, those written to the prompt cache, charged at the cache-write price.
      cache_write_tokens: breakdown.reduce((sum, row) => sum + row.cache_write_tokens, 0),
      estimated_cost: usage.cost_usd,
    },
    unified_response: unified,
  };
  const parsed = parseJsonResult(result);
  if (parsed !== undefined) view.response = parsed;
  return view;
}

/** The task's token budget as spec 2.5 puts it in `context` (`budget_max` as the reference seeds it). */
function budgetInfo(task: TaskRow, defaultBudget: number, used: number) {
  const budget = task.token_budget ?? defaultBudget;
  return { budget_max: budget, budget_used: used, budget_remaining: Math.max(0, budget - used) };
}

function sumUsage(rows: UsageBreakdownRow[]) {
  const total = { input_tokens: 0, output_tokens: 0, total_tokens: 0, cost_usd: 0 };
  for (const row of rows) {
    total.input_tokens += row.input_tokens;
    total.output_tokens += row.output_tokens;
    total.total_tokens += row.total_tokens;
    total.cost_usd += row.cost_usd;
  }
  total.cost_usd = roundUsd(total.cost_usd);
  return total;
}

function toModelBreakdown(rows: UsageBreakdownRow[], totalCost: number) {
  return rows.map((row) => ({
    model: row.model,
    provider: row.provider,
    executions: row.executions,
    tokens: row.total_tokens,
    input_tokens: row.input_tokens,
    output_tokens: row.output_tokens,
    cached_input_tokens: row.cached_input_tokens,
    cache_write_tokens: row.cache_write_tokens,
    cost_usd: roundUsd(row.cost_usd),
    percentage: totalCost > 0 ? Math.round((row.cost_usd / totalCost) * 100) : 0,
  }));
}

function executionTimeMs(task: TaskRow): number | null {
  if (!task.started_at) return null;
  const end = task.completed_at ?? new Date();
  return Math.max(0, end.getTime() - task.started_at.getTime());
}

/** `response` is present only when the result is a JSON object or array (spec 2.5). */
function parseJsonResult(result: string): unknown {
  const trimmed = result.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return undefined;
  try {
    return JSON.parse(trimmed);
  } catch {
    return undefined;
  }
}


/**
 * What a research task adds to the unified response (spec 2.6): its citations, verification and facts; a failed
 * one, the phase it failed in and its research agents' answers (docs/decisions.md, issue 27 Scope 7).
 */
const RESEARCH_FIELDS = [
  'citations', 'verification', 'extracted_facts', 'fact_summary', 'agent_count', 'research_strategy', 'iterations', 'failed_phase', 'partial_findings',
];

function researchFields(metadata: unknown): Record<string, unknown> {
  if (typeof metadata !== 'object' || metadata === null) return {};
  return Object.fromEntries(Object.entries(metadata).filter(([key]) => RESEARCH_FIELDS.includes(key)));
}
