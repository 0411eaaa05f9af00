export { AgentgateClient, ROUTES_BY_GROUP } from './client.ts';
export type { CallOptions, ClientOptions, SubmitOptions } from './core.ts';
export {
  AgentgateError, AuthenticationError, BadRequestError, ConflictError, ConnectionError, NotFoundError, PayloadTooLargeError,
  PermissionDeniedError, RateLimitError, ServerError, TaskFailedError,
} from './errors.ts';
export { TaskView, agentStates, answerText, eventText, isTerminalEvent, taskPlan, viewOf } from './events.ts';
export type { AgentState, AgentStatus, PlannedSubtask, TaskEvent, TaskPlan } from './events.ts';
export type { StreamOptions } from './stream.ts';
export type { WaitOptions, WaitResult } from './tasks.ts';
export type { RetryOptions } from './transport.ts';
export { TERMINAL_STATUSES } from './types.ts';
export type * from './types.ts';
export type { paths } from './generated/openapi.ts';
