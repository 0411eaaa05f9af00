import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inMemoryApp } from '../../../packages/sdk/scripts/app-document.ts';
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
