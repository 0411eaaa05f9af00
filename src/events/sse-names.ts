import type { TaskEvent } from './append-event.ts';
import { encodeChunk, formatFrame, type EncodedChunk, type SseFrame } from './sse.ts';

/** Spec/DESIGN event names on the native SSE stream; other types keep their own name. */
const SSE_NAMES: Record<string, string> = {
  LLM_PARTIAL: 'thread.message.delta',
  LLM_OUTPUT: 'thread.message.completed',
  STREAM_END: 'done',
  ERROR_OCCURRED: 'error',
  WORKFLOW_PAUSING: 'workflow.pausing',
  WORKFLOW_PAUSED: 'workflow.paused',
  WORKFLOW_RESUMED: 'workflow.resumed',
  WORKFLOW_CANCELLING: 'workflow.cancelling',
  WORKFLOW_CANCELLED: 'workflow.cancelled',
};

const TYPES_BY_SSE_NAME = new Map(Object.entries(SSE_NAMES).map(([type, name]) => [name, type]));

/** The event type an SSE event name stands for (`thread.message.delta` → `LLM_PARTIAL`); undefined when none. */
export const eventTypeOfSseName = (name: string): string | undefined => TYPES_BY_SSE_NAME.get(name);

/** One task event as an SSE frame: id is the stream id, data carries `type` and `seq` (STREAM_END is `[DONE]`). */
export function toSseFrame(event: TaskEvent): SseFrame {
  const name = SSE_NAMES[event.type] ?? event.type;
  if (event.type === 'STREAM_END') return { id: event.stream_id, event: name, data: '[DONE]' };
  const data: Record<string, unknown> = { ...event };
  if (event.type === 'LLM_PARTIAL') data.delta = event.message ?? '';
  if (event.type === 'LLM_OUTPUT') {
    data.response = event.message ?? '';
    data.metadata = event.payload;
  }
  return { id: event.stream_id, event: name, data: JSON.stringify(data) };
}

/**
 * An event's frame as written to the socket, formatted and encoded once per event: the streams of a task share
 * its event objects (task-feed.ts), so a thousand streams of one task encode each event once, not a thousand times.
 */
const encodedFrames = new WeakMap<TaskEvent, EncodedChunk>();
export function encodedSseFrame(event: TaskEvent): EncodedChunk {
  let encoded = encodedFrames.get(event);
  if (encoded === undefined) encodedFrames.set(event, encoded = encodeChunk(formatFrame(toSseFrame(event))));
  return encoded;
}
