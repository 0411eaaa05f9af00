import type { Deps } from '../deps.ts';
import type { App } from '../http/app-type.ts';
import { optionalBody } from '../http/empty-body.ts';
import { throttle } from '../http/fixed-window.ts';
import { ErrorBody } from '../http/error-body.ts';
import { describeCaller, login, register } from './accounts.ts';
import { createApiKey, listApiKeys, revokeApiKey, rotateApiKey } from './api-keys.ts';
import {
  CreatedKey, CreateKeyBody, KeyIdParams, ListKeysResponse, LoginBody, MeResponse, RefreshBody,
  RegisterBody, RegisterResponse, RevokeResponse, RotateKeyBody, TokenPair,
} from './schemas.ts';
import { refreshTokens } from './session-tokens.ts';

const errors = { 400: ErrorBody, 401: ErrorBody, 403: ErrorBody, 404: ErrorBody, 409: ErrorBody, 429: ErrorBody };

/**
 * Authentication routes (spec 4.8). Register, login and refresh are public and throttled per IP. Answers
 * that hold secrets are never stored for Idempotency-Key replays.
 */
export async function authRoutes(app: App, deps: Deps) {
  const throttleIp = async (request: { ip: string; routeOptions: { url?: string } }) => {
    await throttle(deps.db, `auth:${request.routeOptions.url}:${request.ip}`, 60, deps.config.auth.loginAttemptsPerIp, 'Rate limit exceeded');
  };

  app.post('/api/v1/auth/register', {
    config: { public: true, replayAnswer: false }, preHandler: throttleIp,
    schema: {
      tags: ['auth'], summary: 'Create an account (a new tenant and its owner); the answer does not say whether the email was new',
      body: RegisterBody, response: { 202: RegisterResponse, ...errors },
    },
  }, async (request, reply) => reply.status(202).send(await register(deps.db, request.body, request.ip)));

  app.post('/api/v1/auth/login', {
    config: { public: true, replayAnswer: false },
    schema: { tags: ['auth'], summary: 'Sign in: an access token and a refresh token', body: LoginBody, response: { 200: TokenPair, ...errors } },
  }, async (request) => login(deps.db, deps.config, request.body, request.ip));

  app.post('/api/v1/auth/refresh', {
    config: { public: true, replayAnswer: false }, preHandler: throttleIp,
    schema: { tags: ['auth'], summary: 'Rotate a refresh token for a new pair', body: RefreshBody, response: { 200: TokenPair, ...errors } },
  }, async (request) => refreshTokens(deps.db, deps.config, request.body.refresh_token, request.ip));

  app.get('/api/v1/auth/me', {
    schema: { tags: ['auth'], summary: 'The calling user, tenant, role and scopes', response: { 200: MeResponse, ...errors } },
  }, async (request) => describeCaller(deps.db, request.caller));

  app.post('/api/v1/auth/api-keys', {
    config: { scope: 'keys:manage', replayAnswer: false },
    schema: { tags: ['auth'], summary: 'Create an API key (the secret is shown once)', body: CreateKeyBody, response: { 201: CreatedKey, ...errors } },
  }, async (request, reply) => reply.status(201).send(await createApiKey(deps.db, deps.config, request.caller, request.body, request.ip)));

  app.get('/api/v1/auth/api-keys', {
    config: { scope: 'keys:manage' },
    schema: { tags: ['auth'], summary: 'List API keys (without secrets)', response: { 200: ListKeysResponse, ...errors } },
  }, async (request) => listApiKeys(deps.db, request.caller));

  app.post('/api/v1/auth/api-keys/refresh', {
    config: { scope: 'keys:manage', replayAnswer: false },
    preValidation: optionalBody,
    schema: { tags: ['auth'], summary: 'Rotate an API key: a new secret, the old one revoked', body: RotateKeyBody, response: { 201: CreatedKey, ...errors } },
  }, async (request, reply) => reply.status(201).send(await rotateApiKey(deps.db, request.caller, request.body.id, request.ip)));

  app.delete('/api/v1/auth/api-keys/:id', {
    config: { scope: 'keys:manage' },
    schema: { tags: ['auth'], summary: 'Revoke an API key', params: KeyIdParams, response: { 200: RevokeResponse, ...errors } },
  }, async (request) => revokeApiKey(deps.db, request.caller, request.params.id, request.ip));
}
