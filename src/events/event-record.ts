import { Type } from 'typebox';
import type { TaskEvent } from './append-event.ts';

/** An event as the history endpoints return it (spec 6.1). */
export const TaskEventRecord = Type.Object({
  workflow_id: Type.String(),
  type: Type.String(),
  agent_id: Type.Union([Type.String(), Type.Null()]),
  message: Type.Union([Type.String(), Type.Null()]),
  payload: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  timestamp: Type.String(),
  seq: Type.Integer(),
  stream_id: Type.String(),
});

/** Event records carry `payload` only when it holds something. */
export function withPayloadWhenPresent({ payload, ...event }: TaskEvent) {
  return payload && Object.keys(payload).length > 0 ? { ...event, payload } : event;
}
