import { randomUUID } from 'node:crypto';
import { isUuid } from '../uuid.ts';


export interface ResolvedSession {
  id: string;
  externalId: string | null;
  /** What the client should use to continue the conversation: its custom id, or the UUID. */
  publicId: string;
}

export interface SessionDefaults {
  tokenBudget: number;
  ttlDays: number;
  /** The submitting task's context: a new session records its feature flags (spec 2.9). */
  taskContext: Record<string, unknown>;
}

/**
 * What the submission asks of its session, for `submit_task` (migration 0006), which finds the caller's
 * session or creates it in the statement that inserts the task (spec 2.9 dual ids, 4.2 rule 6). A UUID or
 * custom id that belongs to someone else, or to a deleted or expired session, never exposes it: the caller
 * gets a new one (`newId`), and an expired custom id is retired so that it starts a fresh session.
 */
export interface SessionClaim {
  /** A UUID the client sent, lower-cased; null for a custom id or none. */
  sessionId: string | null;
  externalId: string | null;
  /** The id of the session created when the claim does not find a live session of the caller. */
  newId: string;
  tokenBudget: number;
  ttlDays: number;
  /** The context a new session starts with. */
  context: Record<string, unknown>;
}

const SESSION_FLAGS = ['role', 'force_research', 'force_swarm', 'research_strategy', 'template'];

export function claimSession(requestedId: string | undefined, defaults: SessionDefaults): SessionClaim {
  const flags = Object.fromEntries(SESSION_FLAGS.filter((key) => defaults.taskContext[key] !== undefined).map((key) => [key, defaults.taskContext[key]]));
  const isExternal = requestedId !== undefined && !isUuid(requestedId);
  return {
    sessionId: requestedId !== undefined && !isExternal ? requestedId.toLowerCase() : null,
    externalId: isExternal ? requestedId : null,
    newId: randomUUID(),
    tokenBudget: defaults.tokenBudget,
    ttlDays: defaults.ttlDays,
    context: isExternal ? { ...flags, external_id: requestedId } : flags,
  };
}

export function resolvedSession(claim: SessionClaim, id: string): ResolvedSession {
  return { id, externalId: claim.externalId, publicId: claim.externalId ?? id };
}
