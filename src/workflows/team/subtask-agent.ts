import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import type { AgentCall } from '../agent-calls/call-agent.ts';
import { runAgent } from '../agent-calls/run-agent.ts';
import { roleToolSet } from '../agent-calls/role-tools.ts';
import { buildSystemPrompt } from '../agent-calls/system-prompt.ts';
import type { Subtask, TaskPlan } from '../planning/plan.ts';
import { endsTheTask } from '../runtime/control-errors.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';

/** What one subtask's agent produced: recorded by its durable step, so a replay reads it back. */
export type SubtaskResult =
  | { subtaskId: string; ok: true; answer: AgentAnswer }
  | { subtaskId: string; ok: false; error: string };

interface SubtaskRunBase {
  subtask: Subtask;
  /** Results of the subtasks it depends on, handed to its agent. */
  inputs: SubtaskResult[];
  /** 1 for the first try; the mock's scripted failures count tries. */
  attempt: number;
  /** The agent's answer is the task's answer (a one-subtask plan): its deltas are streamed as such. */
  finalAnswer: boolean;
  /** Events that go out before the agent starts, e.g. DEPENDENCY_SATISFIED or DELEGATION. */
  announce?: NewTaskEvent[];
}

/** A planned subtask's agent (its call worded from the plan), or an agent whose mode words its call (a research agent). */
export type SubtaskRun = SubtaskRunBase & ({ plan: TaskPlan } | { call: AgentCall });
type PlannedRun = SubtaskRunBase & { plan: TaskPlan };

/**
 * Runs one subtask's agent inside the caller's durable step. A failure of the agent (its model failing) is the
 * subtask's result, reported as ERROR_OCCURRED; a spent budget pauses the task here (runtime/budget-policy.ts);
 * a cancellation, the deadline or a shutdown ends the task instead.
 */
export async function runSubtaskAgent(deps: Deps, task: TaskSnapshot, run: SubtaskRun, cancel: AbortSignal): Promise<SubtaskResult> {
  const { subtask } = run;
  const stepKey = `agent:${subtask.id}:${run.attempt}#${currentStepId()}`;
  if (run.announce && run.announce.length > 0) {
    await appendEvents(deps, task.id, 'workflow', run.announce.map((event, index) => ({ ...event, dedupeKey: `${stepKey}:announce${index}` })));
  }
  try {
    const outcome = await runAgent(deps, task, 'call' in run ? run.call : subtaskCall(deps, task, run), stepKey, cancel);
    if ('answer' in outcome) return { subtaskId: subtask.id, ok: true, answer: outcome.answer };
    throw new Error('a subtask agent waits out a spent budget');
  } catch (error) {
    if (cancel.aborted || deps.handingOver.aborted || endsTheTask(error)) throw error;
    return failed(deps, task, stepKey, subtask, error instanceof Error ? error.message : String(error));
  }
}

async function failed(deps: Deps, task: TaskSnapshot, stepKey: string, subtask: Subtask, error: string): Promise<SubtaskResult> {
  await appendEvents(deps, task.id, 'workflow', [{
    type: 'ERROR_OCCURRED', agentId: subtask.id, message: `Agent ${subtask.id} failed: ${error}`.slice(0, 1000),
    payload: { subtask_id: subtask.id, error: error.slice(0, 1000) }, dedupeKey: `${stepKey}:failed`,
  }]);
  return { subtaskId: subtask.id, ok: false, error };
}

function subtaskCall(deps: Deps, task: TaskSnapshot, run: PlannedRun): AgentCall {
  const { subtask, plan } = run;
  const scriptedFailures = task.settings.mock.failures[subtask.id] ?? 0;
  return {
    agentId: subtask.id,
    progress: `Working on ${subtask.id}: ${subtask.description.slice(0, 200)}`,
    finalAnswer: run.finalAnswer,
    maxOutputTokens: task.settings.maxOutputTokens,
    system: [
      buildSystemPrompt(task.settings),
      plan.subtasks.length > 1 ? `You are one agent of a team answering: ${task.query}\nDo only your part; others do the rest.` : '',
    ].filter(Boolean).join('\n\n'),
    messages: [{ role: 'user', content: [subtask.description, toolHint(subtask), inputsSection(run.inputs, plan)].filter(Boolean).join('\n\n') }],
    mockScript: run.attempt <= scriptedFailures ? { fail: true } : undefined,
    onSpentBudget: { waitAt: subtask.id },
    // Every planned agent may use its role's tools; the decomposition's suggestions are hints in its prompt.
    tools: roleToolSet(deps.tools, task.tenantId, task.settings.role),
  };
}

function toolHint(subtask: Subtask): string {
  if (subtask.suggestedTools.length === 0) return '';
  const parameters = Object.keys(subtask.toolParameters).length > 0 ? ` with ${JSON.stringify(subtask.toolParameters)}` : '';
  return `Suggested tools: ${subtask.suggestedTools.join(', ')}${parameters}.`;
}

function inputsSection(inputs: SubtaskResult[], plan: TaskPlan): string {
  if (inputs.length === 0) return '';
  const described = (id: string) => plan.subtasks.find((subtask) => subtask.id === id)?.description ?? id;
  return ['Results of the steps before yours:', ...inputs.map((input) => (input.ok
    ? `### ${input.subtaskId}: ${described(input.subtaskId)}\n${input.answer.text}`
    : `### ${input.subtaskId}: ${described(input.subtaskId)}\n(failed: ${input.error})`))].join('\n');
}
