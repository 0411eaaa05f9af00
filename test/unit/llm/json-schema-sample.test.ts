import { test } from 'node:test';
import assert from 'node:assert/strict';
import { sampleFromJsonSchema } from '../../../src/llm/json-schema-sample.ts';

test('references, enums and nullable unions resolve to their first usable form', () => {
  const schema = {
    type: 'object',
    properties: {
      status: { $ref: '#/definitions/Status' },
      owner: { anyOf: [{ type: 'null' }, { type: 'string', format: 'email' }] },
      tags: { type: 'array', items: { type: 'string', maxLength: 6 } },
    },
    definitions: { Status: { type: 'string', enum: ['open', 'closed'] } },
  };
  assert.deepEqual(sampleFromJsonSchema(schema), { status: 'open', owner: 'mock@example.com', tags: ['mock t'] });
});

test('numbers honour their bounds and integers stay whole', () => {
  assert.equal(sampleFromJsonSchema({ type: 'integer', exclusiveMinimum: 3 }), 4);
  assert.equal(sampleFromJsonSchema({ type: 'number', minimum: 2.5 }), 2.5);
  assert.equal(sampleFromJsonSchema({ type: 'number', maximum: -1 }), -1);
  assert.equal(sampleFromJsonSchema({ type: ['integer', 'null'] }), 1);
});

test('allOf merges the properties of every part', () => {
  const schema = { allOf: [{ properties: { a: { type: 'boolean' } } }, { properties: { b: { const: 7 } } }] };
  assert.deepEqual(sampleFromJsonSchema(schema), { a: false, b: 7 });
});

test('tuples get one value per position', () => {
  const schema = { type: 'array', prefixItems: [{ type: 'string' }, { type: 'null' }] };
  assert.deepEqual(sampleFromJsonSchema(schema), ['mock value 1', null]);
});
