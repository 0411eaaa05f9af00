import type { JSONSchema7 } from '@ai-sdk/provider';
import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import { callModelWithinBudget } from '../agent-calls/budgeted-call.ts';
import { taskModelSelection } from '../agent-calls/model-call.ts';
import { availableToolNames } from '../agent-calls/role-tools.ts';
import { endsTheTask } from '../runtime/control-errors.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import { DecompositionSchema, MAX_SUBTASKS, parseDecomposition, singleSubtaskPlan, type TaskPlan } from './plan.ts';
import { withCancelWatch } from '../runtime/cancel-watch.ts';

export const DECOMPOSE_AGENT_ID = 'decompose';

/** The multi-agent mode a client asked for, which the planner is told about. */
export type PlanningHint = 'standard' | 'complex' | 'supervisor' | undefined;

const DECOMPOSITION_MAX_OUTPUT_TOKENS = 2048;

/**
 * The decomposition call (reference §1.4) as one durable step: the model answers a JSON plan, which is
 * validated against the plan schema. A call that fails or an answer that does not validate falls back to
 * the whole query as one subtask, announced as ERROR_RECOVERY; a cancellation or the deadline is not a failure.
 */
export function decompose(deps: Deps, task: TaskSnapshot, hint: PlanningHint): Promise<TaskPlan> {
  return runTaskStep(deps, 'decompose', () => withCancelWatch(deps, task.id, async (cancel) => {
    const stepKey = `decompose#${currentStepId()}`;
    await appendEvents(deps, task.id, 'workflow', [{
      type: 'PROGRESS', agentId: DECOMPOSE_AGENT_ID, message: 'Understanding your request',
      payload: { stage: 'planning' }, dedupeKey: `${stepKey}:start`,
    }]);
    const planned = await planOrProblem(deps, task, hint, stepKey, cancel);
    if (typeof planned !== 'string') return planned;
    deps.logger.warn({ task_id: task.id, problem: planned }, 'decomposition failed; running the query as one subtask');
    await appendEvents(deps, task.id, 'workflow', [fallbackEvent(stepKey, planned)]);
    return singleSubtaskPlan(task.query);
  }));
}

async function planOrProblem(deps: Deps, task: TaskSnapshot, hint: PlanningHint, stepKey: string, cancel: AbortSignal): Promise<TaskPlan | string> {
  try {
    const answer = await decompositionCall(deps, task, hint, stepKey, cancel);
    return parseDecomposition(parseJsonAnswer(answer));
  } catch (error) {
    if (cancel.aborted || endsTheTask(error)) throw error;
    return error instanceof Error ? error.message : String(error);
  }
}

/** The call; refused for a spent budget, the task pauses here (runtime/budget-policy.ts). */
async function decompositionCall(deps: Deps, task: TaskSnapshot, hint: PlanningHint, stepKey: string, cancel: AbortSignal): Promise<string> {
  const outcome = await callModelWithinBudget(deps, task, {
    agentId: DECOMPOSE_AGENT_ID,
    callKey: `${task.id}:${stepKey}`,
    request: {
      selection: taskModelSelection(task),
      system: decompositionPrompt(availableToolNames(deps.tools, task.tenantId, task.settings.role), hint),
      messages: [{ role: 'user', content: task.query }],
      responseSchema: DecompositionSchema as JSONSchema7,
      mockOptions: { purpose: 'decomposition', ...(task.settings.mock.plan === undefined ? {} : { plan: task.settings.mock.plan }) },
    },
    maxOutputTokens: DECOMPOSITION_MAX_OUTPUT_TOKENS,
    onSpentBudget: { waitAt: 'decomposition' },
  }, cancel);
  if (!('result' in outcome)) throw new Error('a decomposition waits out a spent budget');
  return outcome.result.text;
}

/** The JSON object in the answer, tolerating a Markdown code fence around it. */
export function parseJsonAnswer(text: string): unknown {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(text);
  try {
    return JSON.parse((fenced?.[1] ?? text).trim());
  } catch {
    return undefined;
  }
}

function fallbackEvent(stepKey: string, problem: string): NewTaskEvent {
  return {
    type: 'ERROR_RECOVERY', agentId: DECOMPOSE_AGENT_ID,
    message: 'Could not plan the task; answering it as one subtask',
    payload: { recovery: 'decomposition_fallback', error: problem.slice(0, 500) },
    dedupeKey: `${stepKey}:fallback`,
  };
}

const HINTS: Record<Exclude<PlanningHint, undefined>, string> = {
  standard: 'The user asked for a multi-agent answer: plan two or more subtasks unless the request truly has one part.',
  complex: 'The user asked for a thorough multi-agent answer: plan the subtasks a careful team would split the work into.',
  supervisor: 'A supervisor will hand the subtasks to specialists one after another: order them so each can build on the ones before.',
};

function decompositionPrompt(tools: string[], hint: PlanningHint): string {
  return [
    'You plan how a team of AI agents answers a request. Split it into independent subtasks only where that helps;',
    `a simple request is one subtask. Use at most ${MAX_SUBTASKS} subtasks (3 to 5 is usually right) and do not add a`,
    'subtask that only combines the others: the results are combined afterwards. Give a subtask dependencies only when it',
    'needs another subtask\'s output to start.',
    hint ? HINTS[hint] : '',
    tools.length > 0 ? `Tools the agents may use: ${tools.join(', ')}. Suggest a tool for a subtask only when it needs it.` : 'The agents have no tools.',
    'Answer with one JSON object and nothing else:',
    '{"complexity_score": number from 0 to 1 (below 0.3 for a simple request, 0.5 or more when tools are needed),',
    ' "subtasks": [{"id": "task-1", "description": "what this agent must do", "dependencies": ["ids of subtasks it needs"],',
    '   "suggested_tools": ["tool names"], "tool_parameters": {}}],',
    ' "execution_strategy": "parallel" | "sequential" | "hybrid", "concurrency_limit": integer}',
  ].filter(Boolean).join('\n');
}
