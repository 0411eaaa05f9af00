import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Validator } from '@seriousme/openapi-schema-validator';
import { inMemoryApp } from '../../packages/sdk/scripts/app-document.ts';
import { useGateway } from '../helpers/gateway.ts';

const gateway = useGateway();

/** The document lists paths in OpenAPI form (`{id}`, a wildcard as `{*}`), Fastify routes in its own (`:id`, `*`). */
const toOpenApiPath = (url: string) => url.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\*$/, '{*}');

test('/openapi.json is a valid OpenAPI 3.0 document', async () => {
  const document = (await gateway().request('GET', '/openapi.json')).body;
  const result = await new Validator().validate(document);
  assert.equal(result.valid, true, JSON.stringify(result.errors, null, 1)?.slice(0, 2_000));
  assert.equal(document.openapi, '3.0.0');
  const ratio = document.paths['/api/v1/tasks'].post.requestBody.content['application/json'].schema.properties.context.properties.compression_trigger_ratio;
  assert.deepEqual([ratio.minimum, ratio.exclusiveMinimum], [0, true], 'OpenAPI 3.0 form of an exclusive bound');
});

test('public routes need no credential in the document; the others need one', async () => {
  const { paths } = (await gateway().request('GET', '/openapi.json')).body;
  for (const [path, method] of [['/health', 'get'], ['/readiness', 'get'], ['/api/v1/auth/register', 'post'], ['/api/v1/auth/login', 'post'], ['/api/v1/auth/refresh', 'post']]) {
    assert.deepEqual(paths[path][method].security, [], `${method} ${path}`);
  }
  assert.equal(paths['/api/v1/tasks'].post.security, undefined, 'inherits the document-wide credential');
  assert.ok(paths['/api/v1/stream/ws']?.get, 'the WebSocket route is documented');
});

test('every route the server registers is in the document', async () => {
  const app = await inMemoryApp();
  const { document } = app;
  const routes = app.routes.filter((route) => !route.hidden && route.method !== 'HEAD' && route.method !== 'OPTIONS' && route.url !== '*');
  assert.ok(routes.length >= 30, `${routes.length} routes`);
  const missing = routes.filter((route) => document.paths[toOpenApiPath(route.url)]?.[route.method.toLowerCase()] === undefined);
  assert.deepEqual(missing, []);
  const hidden = app.routes.filter((route) => route.hidden && route.url !== '*').map((route) => route.url);
  assert.deepEqual([...new Set(hidden)].sort(), ['/', '/console', '/console/*', '/mcp', '/openapi.json', '/v1/*'],
    'only the document itself, the web console\'s pages and files (and the root, which leads to them), the MCP endpoint (its contract is MCP\'s, see docs/decisions.md), the OpenAI layer\'s 404 for addresses it does not serve and the CORS preflight catch-all are left out');
});
