import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { workflowRecord } from '../engine/engine.ts';
import { findOwnedTask } from './queries.ts';
import { toStatusName } from './status-names.ts';
import type { TaskRow } from '../db/schema.ts';
import { isTerminal } from '../task-state/statuses.ts';

/** Which phase each durable step belongs to (first match); anything else counts as execution. */
const PHASE_RULES: Array<[RegExp, string]> = [
  [/^(start-task|checkpoint:pre_routing|(paused|resumed):pre_routing)$/, 'setup'],
  [/^(complete-task|finish-with-error|session-title|checkpoint:pre_completion|(paused|resumed):pre_completion)$/, 'completion'],
  [/^(decompose|assign-role|announce-plan|(checkpoint|paused|resumed):post_decomposition)$/, 'planning'],
  [/^approval:/, 'approval'],
  [/^(synthesis|(checkpoint|paused|resumed):pre_synthesis)$/, 'synthesis'],
];
const WAIT_STEPS = /^DBOS\.(recv|sleep|getEvent)/;

interface TimelineStep {
  index: number;
  name: string;
  kind: 'step' | 'wait' | 'child_workflow';
  phase: string;
  status: 'completed' | 'failed' | 'running';
  started_at: string | null;
  completed_at: string | null;
  duration_ms: number | null;
  retries: number;
  error: string | null;
}

/**
 * GET /api/v1/tasks/{id}/timeline: the workflow's durable steps in execution order, from the engine's
 * step records (so it is the same on every replica and every call), grouped into phases.
 */
export async function getTimeline(deps: Deps, caller: Caller, taskId: string) {
  const task = await findOwnedTask(deps.db, caller, taskId);
  const { status, steps: records } = await workflowRecord(task.id);
  const steps = records.length === 0 && task.started_at ? [answerStepOf(task)] : records.map((record): TimelineStep => {
    const output = record.output as { attempts?: number } | null | undefined;
    return {
      index: record.functionID,
      name: record.name,
      kind: record.childWorkflowID ? 'child_workflow' : WAIT_STEPS.test(record.name) ? 'wait' : 'step',
      phase: PHASE_RULES.find(([pattern]) => pattern.test(record.name))?.[1] ?? 'execution',
      status: record.error ? 'failed' : record.completedAtEpochMs === undefined ? 'running' : 'completed',
      started_at: isoOrNull(record.startedAtEpochMs),
      completed_at: isoOrNull(record.completedAtEpochMs),
      duration_ms: span(record.startedAtEpochMs, record.completedAtEpochMs),
      retries: Math.max(0, (output?.attempts ?? 1) - 1),
      error: record.error ? record.error.message : null,
    };
  });
  return {
    workflow_id: task.id,
    status: toStatusName(task.status),
    engine_status: status?.status ?? null,
    // The engine counts every start of the workflow, the first one too.
    recovery_attempts: Math.max(0, (status?.recoveryAttempts ?? 1) - 1),
    created_at: task.created_at.toISOString(),
    started_at: task.started_at?.toISOString() ?? null,
    completed_at: task.completed_at?.toISOString() ?? null,
    duration_ms: span(task.started_at?.getTime(), task.completed_at?.getTime()),
    phases: groupPhases(steps),
    steps,
  };
}

/**
 * A task answered in one step that ended it (the simple path) leaves no step record: the task row is the record
 * (docs/decisions.md, issue 30: one step record fewer), so that step is told from the task's own times.
 */
function answerStepOf(task: TaskRow): TimelineStep {
  const ended = isTerminal(task.status);
  return {
    index: 0, name: 'answer', kind: 'step', phase: 'execution',
    status: !ended ? 'running' : task.status === 'COMPLETED' ? 'completed' : 'failed',
    started_at: isoOrNull(task.started_at?.getTime()),
    completed_at: isoOrNull(task.completed_at?.getTime()),
    duration_ms: span(task.started_at?.getTime(), task.completed_at?.getTime()),
    retries: 0,
    error: ended && task.status !== 'COMPLETED' ? task.error : null,
  };
}

function groupPhases(steps: TimelineStep[]) {
  const phases: Array<{ name: string; started_at: string | null; completed_at: string | null; duration_ms: number | null; steps: number[] }> = [];
  for (const step of steps) {
    const last = phases.at(-1);
    if (last && last.name === step.phase) {
      last.completed_at = step.completed_at;
      last.steps.push(step.index);
    } else {
      phases.push({ name: step.phase, started_at: step.started_at, completed_at: step.completed_at, duration_ms: null, steps: [step.index] });
    }
  }
  for (const phase of phases) {
    phase.duration_ms = span(phase.started_at ? Date.parse(phase.started_at) : undefined, phase.completed_at ? Date.parse(phase.completed_at) : undefined);
  }
  return phases;
}

const isoOrNull = (epochMs: number | undefined) => (epochMs === undefined ? null : new Date(epochMs).toISOString());
const span = (start: number | undefined, end: number | undefined) => (start === undefined || end === undefined ? null : Math.max(0, end - start));
