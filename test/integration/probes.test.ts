import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { useGateway } from '../helpers/gateway.ts';
import { modelCatalogFile } from '../helpers/model-catalog-file.ts';

describe('probes, OpenAPI document and HTTP hygiene', () => {
  const gateway = useGateway();

  it('GET /health answers healthy with version, time and checks', async () => {
    const answer = await gateway().request('GET', '/health');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.status, 'healthy');
    assert.equal(answer.body.version, '0.1.0');
    assert.ok(!Number.isNaN(Date.parse(answer.body.time)));
    assert.equal(typeof answer.body.checks, 'object');
  });

  it('GET /readiness checks the database, the engine and the model provider, naming the mock', async () => {
    const answer = await gateway().request('GET', '/readiness');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.checks.database, 'ok');
    assert.equal(answer.body.checks.engine, 'ok');
    assert.match(answer.body.checks.models, /mock provider/);
  });

  it('GET /openapi.json is an OpenAPI 3.0.0 document covering every route', async () => {
    const answer = await gateway().request('GET', '/openapi.json');
    assert.equal(answer.status, 200);
    assert.equal(answer.body.openapi, '3.0.0');
    assert.equal(answer.body.info.version, '0.1.0');
    const paths = Object.keys(answer.body.paths);
    for (const path of ['/health', '/readiness', '/api/v1/tasks', '/api/v1/tasks/stream', '/api/v1/tasks/{id}']) {
      assert.ok(paths.includes(path), `${path} documented`);
    }
    assert.ok(answer.body.paths['/api/v1/tasks'].post.requestBody);
    assert.ok(answer.body.paths['/api/v1/tasks'].get.parameters.some((parameter: any) => parameter.name === 'limit'));
  });

  it('answers CORS preflight with the spec headers', async () => {
    const answer = await gateway().requestRaw('OPTIONS', '/api/v1/tasks', '', {
      origin: 'http://example.test', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type,idempotency-key,traceparent',
    });
    assert.ok(answer.status === 204 || answer.status === 200);
    assert.equal(answer.headers.get('access-control-allow-origin'), '*');
    for (const header of ['Content-Type', 'Authorization', 'X-API-Key', 'Idempotency-Key', 'traceparent']) {
      assert.match(answer.headers.get('access-control-allow-headers') ?? '', new RegExp(header, 'i'));
    }
    for (const method of ['GET', 'POST', 'PUT', 'DELETE', 'OPTIONS']) {
      assert.match(answer.headers.get('access-control-allow-methods') ?? '', new RegExp(method));
    }
  });

  it('accepts a valid traceparent and ignores an invalid one', async () => {
    const valid = await gateway().request('POST', '/api/v1/tasks', { query: 'traced' }, { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' });
    assert.equal(valid.status, 200);
    const invalid = await gateway().request('POST', '/api/v1/tasks', { query: 'traced' }, { traceparent: 'garbage' });
    assert.equal(invalid.status, 200);
  });

  it('an unknown route answers 404 in the error shape', async () => {
    const answer = await gateway().request('GET', '/api/v1/nothing-here');
    assert.equal(answer.status, 404);
    assert.equal(typeof answer.body.error, 'string');
  });
});

describe('readiness with an unusable model configuration', () => {
  const catalog = modelCatalogFile({ after }, [
    'default_tier: small',
    'providers:',
    '  openai: { kind: openai, api_key_env: OPENAI_API_KEY }',
    '  mock: { kind: mock }',
    'models:',
    '  - { name: big-only, provider: openai, tier: large, priority: 1, context_window: 1000, max_output_tokens: 100, pricing: { input_per_million: 1, output_per_million: 1 } }',
    '  - { name: mock-small, provider: mock, tier: small, priority: 9, context_window: 1000, max_output_tokens: 100, pricing: { input_per_million: 1, output_per_million: 1 } }',
  ]);
  const gateway = useGateway({ env: { MODELS_CONFIG: catalog, OPENAI_API_KEY: 'sk-test-not-used' }, readinessStatus: 503 });

  it('answers 503 naming the failing check', async () => {
    const answer = await gateway().request('GET', '/readiness');
    assert.equal(answer.status, 503);
    assert.match(answer.body.status, /not ready: models/);
    assert.match(answer.body.checks.models, /^failing: /);
    assert.equal(answer.body.checks.database, 'ok');
  });
});
