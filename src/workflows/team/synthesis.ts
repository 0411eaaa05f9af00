import type { Deps } from '../../deps.ts';
import { runBudgetedAgent } from '../agent-calls/budgeted-agent.ts';
import type { TaskPlan } from '../planning/plan.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import type { SubtaskResult } from './subtask-agent.ts';

export const SYNTHESIS_AGENT_ID = 'synthesis';

/**
 * The task's answer from its subtasks' results. One plain result of a one-subtask plan is the answer itself
 * (its agent streamed it as the answer); otherwise a synthesis agent combines the successes and names the
 * failures. Every subtask failing fails the task.
 */
export async function answerFromResults(deps: Deps, task: TaskSnapshot, plan: TaskPlan, results: SubtaskResult[]): Promise<AgentAnswer> {
  const succeeded = results.filter((result) => result.ok);
  if (succeeded.length === 0) {
    throw new Error(`every agent failed: ${results.map((result) => `${result.subtaskId}: ${result.ok ? '' : result.error}`).join('; ')}`.slice(0, 2000));
  }
  if (plan.subtasks.length === 1) return succeeded[0].answer;
  return runBudgetedAgent(deps, task, async () => ({
    agentId: SYNTHESIS_AGENT_ID,
    progress: `Combining the results of ${succeeded.length} agents`,
    finalAnswer: true,
    purpose: 'synthesis',
    maxOutputTokens: task.settings.maxOutputTokens,
    system: 'You combine the work of a team of agents into one answer to the user\'s request. Keep what each found, '
      + 'resolve contradictions, and say plainly what could not be done.',
    messages: [{ role: 'user', content: synthesisPrompt(task, plan, results) }],
  }), 'synthesis');
}

function synthesisPrompt(task: TaskSnapshot, plan: TaskPlan, results: SubtaskResult[]): string {
  const describe = (id: string) => plan.subtasks.find((subtask) => subtask.id === id)?.description ?? id;
  const sections = results.flatMap((result) => (result.ok ? [`### ${result.subtaskId}: ${describe(result.subtaskId)}\n${result.answer.text}`] : []));
  const failures = results.flatMap((result) => (result.ok ? [] : [`- ${result.subtaskId} failed: ${result.error.slice(0, 300)}`]));
  return [
    `Request: ${task.query}`,
    'Results:',
    ...sections,
    failures.length > 0 ? `Subtasks that failed:\n${failures.join('\n')}` : '',
  ].filter(Boolean).join('\n\n');
}
