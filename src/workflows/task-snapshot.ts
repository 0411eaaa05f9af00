/** What a workflow knows about its task once started; recorded by the start step, so replays agree. */
export interface TaskSnapshot {
  id: string;
  tenantId: string;
  userId: string;
  sessionId: string;
  query: string;
  requestedMode: string | null;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
  createdAtMs: number;
  startedAtMs: number;
  /** Wall-clock limit of the whole task (TASK_TIMEOUT_SECONDS), as epoch milliseconds. */
  deadlineMs: number;
}

export interface AgentAnswer {
  agentId: string;
  text: string;
  model: string;
  provider: string;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Model candidates tried for this answer (fallbacks after provider errors). */
  attempts: number;
}
