import type { TaskRow } from '../db/schema.ts';
import type { Deps } from '../deps.ts';
import { modeEntryFor } from './mode-table.ts';
import { routeOfTask, type Routing } from './planning/query-route.ts';
import type { TaskOutcome } from './runtime/task-lifecycle.ts';
import { parseTaskSettings } from './runtime/task-settings.ts';
import type { TaskSnapshot } from './runtime/task-snapshot.ts';

/** The mode a task starts in, and for a task routed without a mode, how and why (stored in its metadata). */
export interface StartingRoute {
  mode: string;
  routing?: Routing;
}

/**
 * The mode a task starts in: the one it asked for, else the deployment's default. Under the default `auto` a
 * clearly simple query starts as `simple` (one agent, no planning call); the rest start as `auto` and are planned.
 * Decided from the stored task alone and recorded by the start, so every replay runs the same route.
 */
export function startingRoute(deps: Deps, row: Pick<TaskRow, 'requested_mode' | 'query' | 'context' | 'options'>): StartingRoute {
  if (row.requested_mode !== null) return { mode: row.requested_mode };
  if (deps.config.defaultTaskMode !== 'auto') return { mode: deps.config.defaultTaskMode };
  const settings = parseTaskSettings(row.context, row.options);
  const routing = routeOfTask(settings, row.query, modeEntryFor(settings, 'auto')?.mode !== 'auto');
  if (!routing) return { mode: 'auto' };
  return { mode: routing.decision === 'direct' ? 'simple' : 'auto', routing };
}

/** Runs the task's workflow: the mode table's entry for its settings and mode (mode-table.ts). */
export async function routeTask(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const mode = task.mode ?? startingRoute(deps, { requested_mode: task.requestedMode, query: task.query, context: task.context, options: task.options }).mode;
  const entry = modeEntryFor(task.settings, mode);
  // Submission refuses what no mode runs; a task whose mode went away since (a restart on other code) fails.
  if (!entry?.run) throw new Error(`mode ${mode} is not available in this deployment`);
  return entry.run(deps, task);
}
