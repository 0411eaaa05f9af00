import type { paths } from './schema.ts';

/** A stored task event as the gateway's OpenAPI document declares it (the same record the SSE stream sends). */
type StoredEvent = paths['/api/v1/tasks/{id}/events']['get']['responses'][200]['content']['application/json']['events'][number];
/** The stream sends `payload: null` where the history leaves it out. */
export type TaskEvent = Omit<StoredEvent, 'payload'> & { payload?: StoredEvent['payload'] | null };
