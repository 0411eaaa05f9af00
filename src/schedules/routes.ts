import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { optionalBody } from '../http/empty-body.ts';
import { ErrorBody } from '../http/error-body.ts';
import { idempotentResourceId } from '../http/idempotency.ts';
import { createSchedule } from './create-schedule.ts';
import { getSchedule, listRuns, listSchedules } from './read-schedules.ts';
import { deleteSchedule, pauseSchedule, resumeSchedule } from './schedule-control.ts';
import {
  CreateScheduleBody, CreateScheduleResponse, DeleteScheduleResponse, ListRunsQuery, ListRunsResponse, ListSchedulesQuery,
  ListSchedulesResponse, PauseScheduleResponse, ResumeScheduleResponse, ScheduleControlBody, ScheduleIdParams, ScheduleView,
  UpdateScheduleBody,
} from './schemas.ts';
import { updateSchedule } from './update-schedule.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody };
// A schedule submits tasks as its owner: the task scopes govern it.
const read = { scope: 'tasks:read' };
const write = { scope: 'tasks:write' };

export async function scheduleRoutes(app: App, deps: Deps) {
  app.post('/api/v1/schedules', {
    config: write,
    schema: { tags: ['schedules'], summary: 'Create a schedule', body: CreateScheduleBody, response: { 201: CreateScheduleResponse, ...errors } },
  }, async (request, reply) => reply.status(201).send(await createSchedule(deps, request.caller, request.body, idempotentResourceId(request))));

  app.get('/api/v1/schedules', {
    config: read,
    schema: { tags: ['schedules'], summary: 'List schedules, newest first', querystring: ListSchedulesQuery, response: { 200: ListSchedulesResponse, ...errors } },
  }, async (request) => listSchedules(deps, request.caller, request.query));

  app.get('/api/v1/schedules/:id', {
    config: read,
    schema: { tags: ['schedules'], summary: 'A schedule with its counters and next run', params: ScheduleIdParams, response: { 200: ScheduleView, ...errors } },
  }, async (request) => getSchedule(deps, request.caller, request.params.id));

  app.put('/api/v1/schedules/:id', {
    config: write,
    schema: { tags: ['schedules'], summary: 'Change a schedule', params: ScheduleIdParams, body: UpdateScheduleBody, response: { 200: ScheduleView, ...errors } },
  }, async (request) => updateSchedule(deps, request.caller, request.params.id, request.body));

  app.get('/api/v1/schedules/:id/runs', {
    config: read,
    schema: {
      tags: ['schedules'], summary: 'The schedule\'s runs, newest first, with their tasks',
      params: ScheduleIdParams, querystring: ListRunsQuery, response: { 200: ListRunsResponse, ...errors },
    },
  }, async (request) => listRuns(deps, request.caller, request.params.id, request.query));

  app.post('/api/v1/schedules/:id/pause', {
    config: write,
    preValidation: optionalBody,
    schema: { tags: ['schedules'], summary: 'Pause a schedule', params: ScheduleIdParams, body: ScheduleControlBody, response: { 200: PauseScheduleResponse, ...errors } },
  }, async (request) => pauseSchedule(deps, request.caller, request.params.id, request.body.reason));

  app.post('/api/v1/schedules/:id/resume', {
    config: write,
    preValidation: optionalBody,
    schema: { tags: ['schedules'], summary: 'Resume a paused schedule', params: ScheduleIdParams, body: ScheduleControlBody, response: { 200: ResumeScheduleResponse, ...errors } },
  }, async (request) => resumeSchedule(deps, request.caller, request.params.id, request.body.reason));

  app.delete('/api/v1/schedules/:id', {
    config: write,
    schema: { tags: ['schedules'], summary: 'Delete a schedule', params: ScheduleIdParams, response: { 200: DeleteScheduleResponse, ...errors } },
  }, async (request) => deleteSchedule(deps, request.caller, request.params.id));
}
