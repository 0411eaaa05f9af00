import { Type, type Static } from 'typebox';
import { SESSION_ID_PATTERN } from '../id-formats.ts';
import { WEBHOOK_EVENTS } from './webhook-events.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const WebhookUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL; it must pass the outbound network guard (TOOLS_NETWORK_ALLOW)' });
const EventList = Type.Array(Type.Enum([...WEBHOOK_EVENTS]), { minItems: 1, uniqueItems: true, description: 'the events to deliver' });

export const CreateWebhookBody = Type.Object({
  url: WebhookUrl,
  events: EventList,
  task_id: Type.Optional(Type.String({ format: 'uuid', description: 'only this task\'s events' })),
  session_id: Type.Optional(Type.String({ pattern: SESSION_ID_PATTERN, description: 'only the events of this session\'s tasks (its id or custom id)' })),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
}, { additionalProperties: false });
export type CreateWebhookInput = Static<typeof CreateWebhookBody>;

export const UpdateWebhookBody = Type.Object({
  url: Type.Optional(WebhookUrl),
  events: Type.Optional(EventList),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
  enabled: Type.Optional(Type.Boolean({ description: 'true re-enables a subscription that was disabled for failing' })),
}, { additionalProperties: false });
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>;

export const WebhookIdParams = Type.Object({ id: Type.String({ format: 'uuid' }) });
export const DeliveryIdParams = Type.Object({ id: Type.String({ format: 'uuid' }), delivery_id: Type.String({ format: 'uuid' }) });

const WebhookFields = {
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  task_id: Nullable(Type.String()),
  session_id: Nullable(Type.String()),
  description: Type.String(),
  task_webhook: Type.Boolean({ description: 'made by a task submission\'s webhook_url' }),
  enabled: Type.Boolean(),
  disabled_reason: Nullable(Type.String()),
  created_at: Type.String(),
  updated_at: Type.String(),
};
export const WebhookView = Type.Object(WebhookFields);
export type WebhookViewType = Static<typeof WebhookView>;

export const WebhookWithSecret = Type.Object({
  ...WebhookFields,
  secret: Type.String({ description: 'whsec_…: verifies the signatures (Standard Webhooks); shown only here and on rotation' }),
});

export const ListWebhooksResponse = Type.Object({ webhooks: Type.Array(WebhookView) });
export const DeleteWebhookResponse = Type.Object({ success: Type.Boolean(), message: Type.String() });

export const RotateSecretResponse = Type.Object({
  secret: Type.String(),
  previous_secret_expires_at: Type.String({ description: 'until then deliveries carry a signature by the old secret too' }),
});

const AttemptView = Type.Object({
  attempt: Type.Integer(),
  round: Type.Integer({ description: '1, then one more per replay' }),
  started_at: Type.String(),
  duration_ms: Type.Integer(),
  status_code: Type.Union([Type.Integer(), Type.Null()]),
  error: Nullable(Type.String()),
});

export const DeliveryView = Type.Object({
  id: Type.String({ description: 'also the webhook-id header of every attempt' }),
  event_type: Type.String(),
  status: Type.Enum(['pending', 'succeeded', 'failed', 'abandoned']),
  round: Type.Integer(),
  next_attempt_at: Nullable(Type.String()),
  last_error: Nullable(Type.String()),
  created_at: Type.String(),
  finished_at: Nullable(Type.String()),
  payload: Type.Unknown({ description: 'the body sent' }),
  attempts: Type.Array(AttemptView),
});

export const ListDeliveriesQuery = Type.Object({
  status: Type.Optional(Type.Enum(['pending', 'succeeded', 'failed', 'abandoned'])),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 50 })),
}, { additionalProperties: false });
export const ListDeliveriesResponse = Type.Object({ deliveries: Type.Array(DeliveryView) });

export const ReplayResponse = Type.Object({ id: Type.String(), status: Type.String(), round: Type.Integer() });
