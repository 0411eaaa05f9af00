import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';

/** The answer's own name: the task's LLM_OUTPUT carries it too (runtime/task-lifecycle.ts). */
const ANSWER_AGENT_ID = 'final_output';
const STEP = 'research:report';

/**
 * Sends the finished report as the answer's deltas (LLM_PARTIAL marked `final_answer`, which the OpenAI layer
 * streams), before verification and fact extraction run. The synthesis agent's own tokens cannot be the answer's:
 * which synthesis is the last is known only once the coverage loop stops, and the cited report rewrites its markers
 * and its Sources list. Keyed by offset, so a re-run of the step after a crash records each delta once.
 */
export function sendReportDeltas(deps: Deps, task: TaskSnapshot, report: string): Promise<void> {
  return runTaskStep(deps, STEP, () => appendEvents(deps, task.id, 'workflow', reportDeltas(report)));
}

/** One delta per paragraph (cut after each run of blank lines): joined, they are the report exactly. */
export function reportDeltas(report: string): NewTaskEvent[] {
  let offset = 0;
  return report.split(/(?<=\n\n)(?!\n)/).filter((piece) => piece !== '').map((delta) => {
    const event = { type: 'LLM_PARTIAL', agentId: ANSWER_AGENT_ID, message: delta, payload: { final_answer: true }, dedupeKey: `${STEP}:p${offset}` };
    offset += delta.length;
    return event;
  });
}
