/**
 * Context keys the server writes itself: the custom session id (submission), the OpenAI layer's copy of the
 * conversation and the model it was asked for, and what marks a schedule's run. They are not the client's context.
 */
export const SERVER_CONTEXT_KEYS = new Set([
  'external_id', 'conversation_history', 'openai_model', 'openai_turn', 'openai_call_settings', 'trigger_type', 'schedule_id', 'max_budget_usd',
]);

/** The OpenAI-compatible layer names the model its caller asked for in every task it submits (openai/chat-task.ts). */
export const isOpenAiConversation = (context: Record<string, unknown>) => typeof context.openai_model === 'string';

/** Serialized size of the context WORKFLOW_STARTED carries; every stream and the event log repeat it. */
export const STARTED_CONTEXT_MAX_BYTES = 8 * 1024;

const MAX_LISTED_OMISSIONS = 20;

export type StartedContextPayload = {
  task_context: Record<string, unknown>;
  /** Keys left out to fit the cap, largest first (present only when something was left out). */
  task_context_omitted?: string[];
};

/**
 * WORKFLOW_STARTED's `task_context` (the reference announces the task context there): the client's own keys,
 * within STARTED_CONTEXT_MAX_BYTES. Over the cap, the largest values are left out until the rest fits, and
 * their keys are listed instead; the full context stays readable on the task (GET /api/v1/tasks/{id}).
 */
export function startedContextPayload(context: Record<string, unknown>): StartedContextPayload {
  const sized = Object.entries(context)
    .filter(([key]) => !SERVER_CONTEXT_KEYS.has(key))
    .map(([key, value]) => ({ key, value, bytes: jsonBytes({ [key]: value }) }));
  const kept = new Set(sized);
  let total = jsonBytes(Object.fromEntries(sized.map(({ key, value }) => [key, value])));
  const omitted: string[] = [];
  for (const entry of sized.toSorted((left, right) => right.bytes - left.bytes)) {
    if (total <= STARTED_CONTEXT_MAX_BYTES) break;
    kept.delete(entry);
    omitted.push(entry.key);
    // Each entry costs its own serialization less the braces, plus a separating comma.
    total -= entry.bytes - 1;
  }
  const taskContext = Object.fromEntries(sized.filter((entry) => kept.has(entry)).map(({ key, value }) => [key, value]));
  if (omitted.length === 0) return { task_context: taskContext };
  return { task_context: taskContext, task_context_omitted: omitted.slice(0, MAX_LISTED_OMISSIONS).map((key) => key.slice(0, 100)) };
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));
