import { Type } from 'typebox';

export const StreamQuery = Type.Object({
  workflow_id: Type.Optional(Type.String({ maxLength: 128 })),
  types: Type.Optional(Type.String({
    maxLength: 2000,
    description: 'comma-separated event types, or the SSE names they are sent under (thread.message.delta …); an unknown name answers 400',
  })),
  last_event_id: Type.Optional(Type.String({ maxLength: 64 })),
});

export const SseQuery = Type.Object({
  ...StreamQuery.properties,
  /** Accepted on SSE only, for clients that cannot send headers (spec 5.5). */
  api_key: Type.Optional(Type.String({ maxLength: 512 })),
});
