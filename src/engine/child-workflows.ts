import { DBOS } from '@dbos-inc/dbos-sdk';

/** A child workflow started by a running workflow: its id, and its result once it ends. */
export interface ChildWorkflow<R> {
  workflowId: string;
  /** Resolves with the child's return value, or rejects with its error; a parent that awaits it holds its worker meanwhile. */
  result(): Promise<R>;
}

/** The child's id: the parent's and the name of the start, so a replay (and anyone reading the engine's records) finds it. */
export const childWorkflowId = (parentId: string, name: string) => `${parentId}:child:${name}`;

/**
 * Starts `workflow` as a child of the running workflow, under an id derived from the parent's id and `name` (unique
 * within the parent: e.g. `agent:<subtask id>`). The engine records the start as one of the parent's operations, so
 * a parent killed and replayed gets the recorded child back instead of starting it again; and a start repeated under
 * the same id returns the existing workflow. The child runs in this process, outside the task queue: a parent that
 * awaits it holds a worker, and a child queued behind its own parent could wait for ever.
 */
export async function startChildWorkflow<Args extends unknown[], R>(
  workflow: (...args: Args) => Promise<R>, name: string, ...args: Args
): Promise<ChildWorkflow<R>> {
  const parentId = DBOS.workflowID;
  if (parentId === undefined || !DBOS.isInWorkflow()) throw new Error(`child workflow ${name} must be started by a workflow, outside its steps`);
  const handle = await DBOS.startWorkflow(workflow, { workflowID: childWorkflowId(parentId, name) })(...args);
  return { workflowId: handle.workflowID, result: () => handle.getResult() };
}
