import type { App } from '../http/app-type.ts';
import type { Deps } from '../deps.ts';
import { optionalBody } from '../http/empty-body.ts';
import { idempotentResourceId } from '../http/idempotency.ts';
import { submitTask } from './submit-task.ts';
import { setTaskBudget } from './budget.ts';
import { cancelTask, getControlState, pauseTask, resumeTask } from './control.ts';
import { getEventHistory } from './event-history.ts';
import { getTaskView, listTaskSummaries } from './read-tasks.ts';
import {
  BudgetBody, BudgetResponse, CancelResponse, ControlBody, ControlResponse, ControlStateResponse,
  EventHistoryQuery, EventHistoryResponse, ListTasksQuery, ListTasksResponse, SubmitStreamBody, SubmitStreamResponse,
  SubmitTaskBody, SubmitTaskResponse, TaskIdParams, TaskView, TimelineResponse,
} from './schemas.ts';
import { ErrorBody } from '../http/error-body.ts';
import { getTimeline } from './timeline.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody };

export async function taskRoutes(app: App, deps: Deps) {
  app.post('/api/v1/tasks', {
    config: { scope: 'tasks:write' },
    schema: { tags: ['tasks'], summary: 'Submit a task', body: SubmitTaskBody, response: { 200: SubmitTaskResponse, ...errors } },
  }, async (request, reply) => {
    const submitted = await submitTask(deps, request.caller, request.body, { taskId: idempotentResourceId(request), traceContext: request.traceContext });
    reply.headers({ 'x-workflow-id': submitted.taskId, 'x-session-id': submitted.session.publicId });
    return {
      task_id: submitted.taskId,
      status: 'STATUS_CODE_OK',
      message: `Task submitted successfully. Session: ${submitted.session.publicId}`,
      created_at: submitted.createdAt.toISOString(),
      ...(submitted.webhook ? { webhook_id: submitted.webhook.id, webhook_secret: submitted.webhook.secret } : {}),
    };
  });

  app.post('/api/v1/tasks/stream', {
    config: { scope: 'tasks:write' },
    schema: { tags: ['tasks'], summary: 'Submit a task and get its stream URL', body: SubmitStreamBody, response: { 201: SubmitStreamResponse, ...errors } },
  }, async (request, reply) => {
    const submitted = await submitTask(deps, request.caller, request.body, { taskId: idempotentResourceId(request), traceContext: request.traceContext });
    const streamUrl = `/api/v1/stream/sse?workflow_id=${submitted.taskId}`;
    reply.status(201).headers({
      'x-workflow-id': submitted.taskId,
      'x-session-id': submitted.session.publicId,
      link: `<${streamUrl}>; rel=stream`,
    });
    return { workflow_id: submitted.taskId, task_id: submitted.taskId, stream_url: streamUrl };
  });

  app.get('/api/v1/tasks', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['tasks'], summary: 'List tasks, newest first', querystring: ListTasksQuery, response: { 200: ListTasksResponse, ...errors } },
  }, async (request) => listTaskSummaries(deps, request.caller, request.query));

  app.get('/api/v1/tasks/:id', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['tasks'], summary: 'Task status and result', params: TaskIdParams, response: { 200: TaskView, ...errors } },
  }, async (request, reply) => {
    reply.header('x-workflow-id', request.params.id);
    return getTaskView(deps, request.caller, request.params.id);
  });

  app.get('/api/v1/tasks/:id/events', {
    config: { scope: 'tasks:read' },
    schema: {
      tags: ['tasks'], summary: 'Persistent event history (LLM_PARTIAL only with include_partial=true)',
      params: TaskIdParams, querystring: EventHistoryQuery, response: { 200: EventHistoryResponse, ...errors },
    },
  }, async (request) => getEventHistory(deps, request.caller, request.params.id, request.query));

  app.get('/api/v1/tasks/:id/timeline', {
    config: { scope: 'tasks:read' },
    schema: {
      tags: ['tasks'], summary: 'Deterministic timeline of the workflow: phases and durable steps',
      params: TaskIdParams, response: { 200: TimelineResponse, ...errors },
    },
  }, async (request) => getTimeline(deps, request.caller, request.params.id));

  app.post('/api/v1/tasks/:id/pause', {
    config: { scope: 'tasks:write' },
    preValidation: optionalBody,
    schema: { tags: ['tasks'], summary: 'Pause at the next checkpoint', params: TaskIdParams, body: ControlBody, response: { 202: ControlResponse, ...errors } },
  }, async (request, reply) => reply.status(202).send(await pauseTask(deps, request.caller, request.params.id, request.body)));

  app.post('/api/v1/tasks/:id/resume', {
    config: { scope: 'tasks:write' },
    preValidation: optionalBody,
    schema: { tags: ['tasks'], summary: 'Resume a paused task', params: TaskIdParams, body: ControlBody, response: { 202: ControlResponse, ...errors } },
  }, async (request, reply) => reply.status(202).send(await resumeTask(deps, request.caller, request.params.id, request.body)));

  app.post('/api/v1/tasks/:id/cancel', {
    config: { scope: 'tasks:write' },
    preValidation: optionalBody,
    schema: {
      tags: ['tasks'], summary: 'Cancel a queued, running or paused task', params: TaskIdParams, body: ControlBody,
      response: { 200: CancelResponse, 202: CancelResponse, ...errors },
    },
  }, async (request, reply) => {
    const outcome = await cancelTask(deps, request.caller, request.params.id, request.body);
    return reply.status(outcome.statusCode).send(outcome.body);
  });

  app.get('/api/v1/tasks/:id/control-state', {
    config: { scope: 'tasks:read' },
    schema: { tags: ['tasks'], summary: 'Pause and cancel state', params: TaskIdParams, response: { 200: ControlStateResponse, ...errors } },
  }, async (request) => getControlState(deps, request.caller, request.params.id));

  app.put('/api/v1/tasks/:id/budget', {
    config: { scope: 'tasks:write' },
    schema: { tags: ['tasks'], summary: 'Set the task token budget (then resume a task paused for budget)', params: TaskIdParams, body: BudgetBody, response: { 200: BudgetResponse, ...errors } },
  }, async (request) => setTaskBudget(deps, request.caller, request.params.id, request.body.token_budget));
}
