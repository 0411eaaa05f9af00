import { randomBytes } from 'node:crypto';
import http from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { requestJson } from './sse-client.ts';

/** The calls the stream benchmark makes besides streaming, as a client application would make them. */
export interface GatewayApi {
  origin: string;
  apiKey: string;
  /** Headers that authenticate a request with the benchmark's key. */
  headers: Record<string, string>;
  /** Kept-alive connections for these calls. */
  agent: http.Agent;
}

export interface TaskContext {
  model_override?: string;
  mock_delay_ms?: number;
  mock_answer_words?: number;
  max_output_tokens?: number;
  token_budget?: number;
}

/**
 * Registers an account (its own tenant), signs in and creates an API key for tasks, as a new user would
 * (test/helpers/accounts.ts does the same); every later request authenticates with that key.
 */
export async function createApiAccount(origin: string): Promise<GatewayApi> {
  const agent = new http.Agent({ keepAlive: true });
  const call = (method: string, path: string, headers: Record<string, string>, body: unknown, expected: number) =>
    callGateway({ origin, agent, headers }, method, path, body, expected);
  const email = `bench-${randomBytes(4).toString('hex')}@example.test`;
  const password = `bench-${randomBytes(12).toString('hex')}`;
  await call('POST', '/api/v1/auth/register', {}, { email, password, name: 'stream bench' }, 202);
  const login = await call('POST', '/api/v1/auth/login', {}, { email, password }, 200) as { access_token: string };
  const key = await call('POST', '/api/v1/auth/api-keys', { authorization: `Bearer ${login.access_token}` },
    { name: 'stream bench', scopes: ['tasks:read', 'tasks:write'] }, 201) as { key: string };
  return { origin, apiKey: key.key, headers: { 'x-api-key': key.key }, agent };
}

export async function submitTask(api: GatewayApi, query: string, context: TaskContext): Promise<string> {
  const answer = await callGateway(api, 'POST', '/api/v1/tasks', { query, context }, 200) as { task_id: string };
  return answer.task_id;
}

const PARK_TIMEOUT_MS = 15_000;
const POLL_INTERVAL_MS = 50;
/** Far more than one long answer needs. */
const RELEASED_TOKEN_BUDGET = 1_000_000;

/**
 * A task that waits, before its agent's first token, until `releaseTask`: it is submitted with a token
 * budget of 1, so its agent call is refused and the task pauses with reason `budget` (spec 3.1) and parks.
 * Unlike a pause request sent after the submission, this cannot lose a race with a worker that starts the
 * agent first.
 */
export async function submitHeldTask(api: GatewayApi, query: string, context: TaskContext): Promise<string> {
  const taskId = await submitTask(api, query, { ...context, token_budget: 1 });
  const deadline = Date.now() + PARK_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const history = await callGateway(api, 'GET', `/api/v1/tasks/${taskId}/events?limit=200`, undefined, 200) as { events: Array<{ type: string }> };
    const types = history.events.map((event) => event.type);
    if (types.includes('WORKFLOW_PAUSED')) return taskId;
    if (types.includes('WORKFLOW_COMPLETED') || types.includes('ERROR_OCCURRED')) break;
    await sleep(POLL_INTERVAL_MS);
  }
  throw new Error(`task ${taskId} did not pause for its budget within ${PARK_TIMEOUT_MS} ms`);
}

/** Raises a held task's budget and resumes it: its agent starts answering. */
export async function releaseTask(api: GatewayApi, taskId: string): Promise<void> {
  await callGateway(api, 'PUT', `/api/v1/tasks/${taskId}/budget`, { token_budget: RELEASED_TOKEN_BUDGET }, 200);
  await callGateway(api, 'POST', `/api/v1/tasks/${taskId}/resume`, { reason: 'stream benchmark' }, 202);
}

export async function taskStatus(api: GatewayApi, taskId: string): Promise<string> {
  const task = await callGateway(api, 'GET', `/api/v1/tasks/${taskId}`, undefined, 200) as { status: string };
  return task.status;
}

async function callGateway(api: Pick<GatewayApi, 'origin' | 'agent' | 'headers'>, method: string, path: string, body: unknown, expected: number | number[]): Promise<unknown> {
  const answer = await requestJson({ ...api, method, path, body });
  if (![expected].flat().includes(answer.status)) {
    throw new Error(`${method} ${path} answered ${answer.status} (expected ${expected}): ${JSON.stringify(answer.body).slice(0, 300)}`);
  }
  return answer.body;
}
