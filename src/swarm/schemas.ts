import { Type } from 'typebox';

/** A human message to a swarm's lead is at most this many bytes of UTF-8 (reference §3.3: 32 KB). */
export const MAX_SWARM_MESSAGE_BYTES = 32 * 1024;
/** The whole body, as the reference caps it (64 KB); a larger one is 413. */
export const SWARM_MESSAGE_BODY_LIMIT = 64 * 1024;

export const SwarmWorkflowParams = Type.Object({ workflowId: Type.String({ format: 'uuid' }) });

export const SwarmMessageBody = Type.Object({
  message: Type.String({ description: 'what the lead should read at its next decision (at most 32 KB)' }),
}, { additionalProperties: false });

export const SwarmMessageResponse = Type.Object({
  success: Type.Boolean(),
  status: Type.Literal('sent'),
});
