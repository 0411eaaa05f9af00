import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { ErrorBody } from '../http/error-body.ts';
import { listDeliveries, replayDelivery } from './deliveries.ts';
import {
  CreateWebhookBody, DeleteWebhookResponse, DeliveryIdParams, ListDeliveriesQuery, ListDeliveriesResponse, ListWebhooksResponse,
  ReplayResponse, RotateSecretResponse, UpdateWebhookBody, WebhookIdParams, WebhookView, WebhookWithSecret,
} from './schemas.ts';
import { createWebhook, deleteWebhook, getWebhook, listWebhooks, rotateWebhookSecret, updateWebhook } from './subscriptions.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 413: ErrorBody, 429: ErrorBody };
// Owners and admins only (subscriptions.ts), with the task scopes: webhooks carry tasks' outcomes.
const read = { scope: 'tasks:read' };
const write = { scope: 'tasks:write' };
const tags = ['webhooks'];

export async function webhookRoutes(app: App, deps: Deps) {
  app.post('/api/v1/webhooks', {
    config: write,
    schema: { tags, summary: 'Subscribe a URL to events (signed per Standard Webhooks)', body: CreateWebhookBody, response: { 201: WebhookWithSecret, ...errors } },
  }, async (request, reply) => reply.status(201).send(await createWebhook(deps, request.caller, request.body)));

  app.get('/api/v1/webhooks', {
    config: read,
    schema: { tags, summary: 'The tenant\'s webhook subscriptions, newest first', response: { 200: ListWebhooksResponse, ...errors } },
  }, async (request) => listWebhooks(deps, request.caller));

  app.get('/api/v1/webhooks/:id', {
    config: read,
    schema: { tags, summary: 'A webhook subscription', params: WebhookIdParams, response: { 200: WebhookView, ...errors } },
  }, async (request) => getWebhook(deps, request.caller, request.params.id));

  app.patch('/api/v1/webhooks/:id', {
    config: write,
    schema: { tags, summary: 'Change or re-enable a webhook subscription', params: WebhookIdParams, body: UpdateWebhookBody, response: { 200: WebhookView, ...errors } },
  }, async (request) => updateWebhook(deps, request.caller, request.params.id, request.body));

  app.delete('/api/v1/webhooks/:id', {
    config: write,
    schema: { tags, summary: 'Delete a webhook subscription', params: WebhookIdParams, response: { 200: DeleteWebhookResponse, ...errors } },
  }, async (request) => deleteWebhook(deps, request.caller, request.params.id));

  app.post('/api/v1/webhooks/:id/rotate-secret', {
    config: write,
    schema: { tags, summary: 'Replace the signing secret; the old one still signs for WEBHOOK_SECRET_GRACE_SECONDS', params: WebhookIdParams, response: { 200: RotateSecretResponse, ...errors } },
  }, async (request) => rotateWebhookSecret(deps, request.caller, request.params.id));

  app.get('/api/v1/webhooks/:id/deliveries', {
    config: read,
    schema: { tags, summary: 'The subscription\'s deliveries, newest first, with their attempts', params: WebhookIdParams, querystring: ListDeliveriesQuery, response: { 200: ListDeliveriesResponse, ...errors } },
  }, async (request) => listDeliveries(deps, request.caller, request.params.id, request.query));

  app.post('/api/v1/webhooks/:id/deliveries/:delivery_id/replay', {
    config: write,
    schema: { tags, summary: 'Send a failed delivery again (same body and webhook-id)', params: DeliveryIdParams, response: { 202: ReplayResponse, ...errors } },
  }, async (request, reply) => reply.status(202).send(await replayDelivery(deps, request.caller, request.params.id, request.params.delivery_id)));
}
