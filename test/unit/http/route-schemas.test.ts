import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inMemoryApp } from '../../../packages/sdk/scripts/app-document.ts';
import { buildSerializer, serializerCompiler } from '../../../src/http/serializer.ts';
import { compileSchema, VALIDATED_PARTS, validatorCompiler } from '../../../src/http/validator.ts';

// The server compiles a route's schemas at its first request (http/validator.ts): a schema Ajv cannot compile
// would fail only then, so every one is compiled here.
test('every schema of every route compiles', async () => {
  const { routes } = await inMemoryApp();
  let compiled = 0;
  for (const route of routes) {
    for (const part of VALIDATED_PARTS) {
      const schema = route.schema[part];
      if (schema === undefined) continue;
      assert.doesNotThrow(() => compileSchema(schema as object, part), `${route.method} ${route.url} ${part}`);
      compiled++;
    }
  }
  assert.ok(compiled > 100, `${compiled} schemas compiled`);
});

// Response serializers are built at their first response too (http/serializer.ts): every one is built here.
test('every response schema of every route builds its serializer', async () => {
  const { routes } = await inMemoryApp();
  let built = 0;
  for (const route of routes) {
    for (const [status, schema] of Object.entries(route.schema.response ?? {})) {
      assert.doesNotThrow(() => buildSerializer(schema as object), `${route.method} ${route.url} ${status}`);
      built++;
    }
  }
  assert.ok(built > 200, `${built} serializers built`);
});

test('the lazy serializer builds once, at its first use, and writes what the schema names', () => {
  const schema = { type: 'object', properties: { id: { type: 'string' }, count: { type: 'integer' } } };
  const serialize = serializerCompiler({ schema, method: 'GET', url: '/x', httpStatus: '200' });
  assert.equal(serialize({ id: 'a', count: 2, secret: 'not in the schema' }), '{"id":"a","count":2}');
  assert.equal(serialize({ id: 'b', count: 3 }), '{"id":"b","count":3}');
  const broken = serializerCompiler({ schema: { type: 'object', properties: { id: { $ref: '#/nowhere' } } }, method: 'GET', url: '/x', httpStatus: '200' });
  assert.throws(() => broken({ id: 'a' }), 'a schema that cannot be built fails at its first use, not at the start');
});

test('the lazy validator coerces query values, refuses wrong body types, and reports Ajv\'s errors', () => {
  const schema = { type: 'object', properties: { limit: { type: 'integer' } }, required: ['limit'] };
  const query = validatorCompiler({ schema, httpPart: 'querystring', method: 'GET', url: '/x' }) as any;
  const value = { limit: '20' };
  assert.equal(query(value), true);
  assert.deepEqual(value, { limit: 20 });
  const body = validatorCompiler({ schema, httpPart: 'body', method: 'POST', url: '/x' }) as any;
  assert.equal(body({ limit: '20' }), false);
  assert.equal(body.errors[0].instancePath, '/limit');
  assert.equal(body({ limit: 20 }), true);
  assert.equal(body.errors, null);
  assert.ok(query.schemaEnv, 'Fastify hands it the parent object, as it does to an Ajv function');
});
