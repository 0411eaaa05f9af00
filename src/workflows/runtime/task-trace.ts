import { ROOT_CONTEXT, type Context } from '@opentelemetry/api';
import { sql } from 'kysely';
import type { Deps } from '../../deps.ts';
import { inSpan } from '../../observability/spans.ts';
import { extractTraceContext } from '../../observability/trace-carrier.ts';

/**
 * One run of a task's workflow as a span of the trace its submission began: the submission stored its context
 * with the task (tasks/submit-task.ts), so a run in another process, after a crash or after a resume joins the
 * same trace. Each run is a span of its own; steps it replays from their records make none (task-step.ts).
 * With tracing off nothing is read.
 */
export async function inTaskTrace<T>(deps: Deps, taskId: string, work: () => Promise<T>): Promise<T> {
  if (!deps.config.tracing.enabled) return work();
  const parent = await submissionTraceContext(deps, taskId);
  return inSpan('task run', { parent, attributes: { 'agentgate.task.id': taskId } }, work);
}

/** A task submitted while tracing was off, or a scheduled run, has none: its runs start a trace of their own. */
async function submissionTraceContext(deps: Deps, taskId: string): Promise<Context> {
  try {
    const row = await deps.db.selectFrom('tasks')
      .select(sql<Record<string, unknown> | null>`options->'trace_context'`.as('carrier'))
      .where('id', '=', taskId).executeTakeFirst();
    return (row?.carrier && extractTraceContext(row.carrier)) || ROOT_CONTEXT;
  } catch (error) {
    // Only the trace's shape depends on it: the run goes on, in a trace of its own.
    deps.logger.warn({ task_id: taskId, err: error }, 'could not read the task trace context');
    return ROOT_CONTEXT;
  }
}
