import { DBOS } from '@dbos-inc/dbos-sdk';

/**
 * Durable messages between running workflows (the engine's send and recv), for agents that talk to each other while
 * they run (a swarm). Not for waiting on people: a workflow in `receiveMessage` holds its worker, which is why a task
 * waiting for a pause, an approval or a review uses the durable wait instead (workflows/runtime/durable-wait.ts).
 */

/**
 * Sends `message` to the workflow `workflowId` on `topic`. From a workflow the send is one of its recorded operations,
 * so a replay does not send it twice; from elsewhere (a request, a step) pass an `idempotencyKey` for the same effect.
 * The message waits in the database until the receiver asks for it, also if the receiver has not started yet.
 */
export async function sendMessage<T>(workflowId: string, topic: string, message: T, idempotencyKey?: string): Promise<void> {
  await DBOS.send(workflowId, message, topic, idempotencyKey);
}

/**
 * The next message to the running workflow on `topic`, in the order they were sent, or null when none comes within
 * `timeoutSeconds`. Called by the workflow itself (not inside a step); what it received, or that it timed out, is
 * recorded, so a replay receives the same message and consumes no other.
 */
export async function receiveMessage<T>(topic: string, timeoutSeconds: number): Promise<T | null> {
  return DBOS.recv<T>(topic, { timeoutSeconds });
}
