import type { paths } from './generated/openapi.ts';

type Operation<P extends keyof paths, M extends keyof paths[P]> = paths[P][M];

/** The JSON body a route takes. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;

/** A route's query parameters, every one optional (the server fills in its defaults). */
export type QueryOf<P extends keyof paths, M extends keyof paths[P]> =
  Operation<P, M> extends { parameters: { query?: infer Q } } ? Partial<NonNullable<Q>> : never;

/** The JSON body of a route's success answer. */
export type ResponseBody<P extends keyof paths, M extends keyof paths[P], S extends number = 200> =
  Operation<P, M> extends { responses: { [K in S]: { content: { 'application/json': infer B } } } } ? B : never;

export type TaskSubmission = RequestBody<'/api/v1/tasks', 'post'>;
export type TaskSubmitted = ResponseBody<'/api/v1/tasks', 'post'>;
export type TaskStatus = ResponseBody<'/api/v1/tasks/{id}', 'get'>;
export type TaskList = ResponseBody<'/api/v1/tasks', 'get'>;
export type ScheduleCreate = RequestBody<'/api/v1/schedules', 'post'>;
export type ScheduleUpdate = RequestBody<'/api/v1/schedules/{id}', 'put'>;
export type ApprovalDecision = RequestBody<'/api/v1/approvals/decision', 'post'>;
export type ChatCompletionRequest = RequestBody<'/v1/chat/completions', 'post'>;
export type ApiKeyCreate = RequestBody<'/api/v1/auth/api-keys', 'post'>;

/** The task statuses after which nothing more happens. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set([
  'TASK_STATUS_COMPLETED', 'TASK_STATUS_FAILED', 'TASK_STATUS_CANCELLED', 'TASK_STATUS_TIMEOUT',
]);

/** One routed call of the SDK: `"GET /api/v1/tasks/{id}"`, as the route appears in /openapi.json. */
export type RouteName = `${'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'} /${string}`;
