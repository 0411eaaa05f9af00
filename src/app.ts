import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifySchema } from 'fastify';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import websocket from '@fastify/websocket';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from './deps.ts';
import { installAuthentication } from './auth/authenticate.ts';
import { credentialKey } from './auth/caller.ts';
import { agentRoutes } from './agents/routes.ts';
import { approvalRoutes } from './approvals/routes.ts';
import { reviewRoutes } from './reviews/routes.ts';
import { authRoutes } from './auth/routes.ts';
import { installEmptyBodyAsAbsent } from './http/empty-body.ts';
import { documentRoute } from './http/openapi-document.ts';
import { installErrorHandler } from './http/error-handler.ts';
import { installIdempotency } from './http/idempotency.ts';
import { installRateLimit } from './http/rate-limit.ts';
import { installStorableInputCheck } from './http/storable-input.ts';
import { installTraceContext } from './http/trace-context.ts';
import { validatorCompiler } from './http/validator.ts';
import { serializerCompiler } from './http/serializer.ts';
import { installHttpMetrics } from './observability/http-metrics.ts';
import type { App } from './http/app-type.ts';
import { openAiRoutes } from './openai/routes.ts';
import { openAiResponseRoutes } from './openai/responses/routes.ts';
import { probeRoutes } from './probes/routes.ts';
import { scheduleRoutes } from './schedules/routes.ts';
import { sessionFileRoutes } from './sessions/files-routes.ts';
import { sessionRoutes } from './sessions/routes.ts';
import { skillRoutes } from './skills/routes.ts';
import { streamingRoutes } from './streaming/routes.ts';
import { swarmRoutes } from './swarm/routes.ts';
import { taskRoutes } from './tasks/routes.ts';
import { toolRoutes } from './tools-api/routes.ts';
import { webhookRoutes } from './webhooks/routes.ts';
import { mcpRoutes } from './mcp-server/routes.ts';
import { consoleRoutes } from './console/routes.ts';

const CORS_ALLOWED_HEADERS = ['Content-Type', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'traceparent', 'tracestate',
  'X-Tenant-ID', 'X-Session-ID', 'Last-Event-ID', 'If-Match', 'Cache-Control', 'Mcp-Protocol-Version'];
/** Every response header a client may need to read; a browser reads only what is listed (the test checks it covers what we send). */
const CORS_EXPOSED_HEADERS = ['X-Workflow-ID', 'X-Session-ID', 'X-Service-Session-ID', 'X-Model-Description',
  'X-Idempotency-Cached', 'X-Idempotency-Key', 'X-Request-ID',
  'X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset',
  'X-RateLimit-Limit-Requests', 'X-RateLimit-Remaining-Requests', 'X-RateLimit-Limit-Tokens', 'X-RateLimit-Remaining-Tokens', 'X-RateLimit-Reset-Requests',
  'Retry-After', 'ETag', 'Link', 'Location'];

/** A route as registered: the OpenAPI test checks the document covers each one, a unit test compiles its schemas. */
export interface RegisteredRoute { method: string; url: string; hidden: boolean; schema: FastifySchema }

declare module 'fastify' {
  interface FastifyInstance { registeredRoutes: ReadonlyArray<RegisteredRoute> }
}

/** Builds the gateway from its feature modules, listed here in one place (STYLE.md §1). */
export async function buildApp(deps: Deps): Promise<App> {
  const app = createFastify(deps);
  const routes: RegisteredRoute[] = [];
  app.decorate('registeredRoutes', routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, hidden: route.schema?.hide === true, schema: route.schema ?? {} });
  });
  // Bodies are JSON only (spec 4): anything else answers 415 rather than reaching validation as text.
  app.removeContentTypeParser('text/plain');

  await app.register(swagger, {
    openapi: {
      openapi: '3.0.0',
      info: { title: 'agentgate', description: 'Agent orchestration gateway', version: '0.1.0' },
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
          bearer: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }, { bearer: [] }],
    },
    transform: documentRoute,
  });
  await app.register(cors, {
    origin: deps.config.corsAllowedOrigins.includes('*') ? '*' : deps.config.corsAllowedOrigins,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
  });
  app.addHook('onSend', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // While shutting down, a request that was already in flight ends its connection with its answer: the
    // server waits for every socket to close, and a kept-alive one would hold it until its idle timeout.
    if (deps.stopping.aborted) reply.header('connection', 'close');
  });
  installTraceContext(app);
  installHttpMetrics(app);
  installErrorHandler(app);
  installEmptyBodyAsAbsent(app);
  installStorableInputCheck(app);
  installAuthentication(app, deps);
  installRateLimit(app, deps, ({ caller }) => (caller && caller.authMethod !== 'development'
    ? { key: credentialKey(caller), tenantId: caller.tenantId, apiKeyId: caller.apiKeyId }
    : undefined));
  installIdempotency(app, {
    db: deps.db, ttlSeconds: deps.config.idempotencyTtlSeconds, claimTimeoutSeconds: deps.config.idempotencyClaimTimeoutSeconds, stopping: deps.handingOver, events: deps.events,
  });
  await app.register(websocket, { options: { maxPayload: 64 * 1024 } });

  await probeRoutes(app, deps);
  await authRoutes(app, deps);
  await taskRoutes(app, deps);
  await streamingRoutes(app, deps);
  await sessionRoutes(app, deps);
  await sessionFileRoutes(app, deps);
  await approvalRoutes(app, deps);
  await reviewRoutes(app, deps);
  await swarmRoutes(app, deps);
  await scheduleRoutes(app, deps);
  await toolRoutes(app, deps);
  await skillRoutes(app, deps);
  await agentRoutes(app, deps);
  await webhookRoutes(app, deps);
  await mcpRoutes(app, deps);
  await openAiRoutes(app, deps);
  await openAiResponseRoutes(app, deps);
  await consoleRoutes(app);

  app.get('/openapi.json', { config: { public: true }, schema: { hide: true } }, async () => app.swagger());
  return app;
}

/**
 * A worker's HTTP (`--role worker`): the probes and /metrics only, so that orchestrators can check it and
 * Prometheus can scrape it. It serves no API.
 */
export async function buildProbeApp(deps: Deps): Promise<App> {
  const app = createFastify(deps);
  installErrorHandler(app);
  await probeRoutes(app, deps);
  return app;
}

function createFastify(deps: Deps): App {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: deps.config.bodyLimitBytes,
    genReqId: (request) => headerRequestId(request.headers['x-request-id']) ?? randomUUID(),
    logController: new LogController({ requestIdLogLabel: 'request_id' }),
    requestTimeout: deps.config.http.timeoutMs,
    connectionTimeout: deps.config.http.timeoutMs,
    keepAliveTimeout: deps.config.http.idleTimeoutMs,
    ajv: { customOptions: {} },
  }).withTypeProvider<TypeBoxTypeProvider>();
  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  return app;
}

function headerRequestId(value: string | string[] | undefined): string | undefined {
  return typeof value === 'string' && /^[A-Za-z0-9._:-]{1,128}$/.test(value) ? value : undefined;
}
