import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkStructuredAnswer, jsonAnswerFormat, StructuredOutputError, structuredOutputOf } from '../../../src/openai/structured-output.ts';

const schema = { type: 'object', properties: { city: { type: 'string' }, days: { type: 'integer', minimum: 1 } }, required: ['city', 'days'], additionalProperties: false };
const format = structuredOutputOf({ type: 'json_schema', json_schema: { name: 'trip', schema, strict: true } })!;

test('text asks for nothing; json_object and json_schema ask the model for JSON', () => {
  assert.equal(structuredOutputOf(undefined), undefined);
  assert.equal(structuredOutputOf({ type: 'text' }), undefined);
  assert.deepEqual(jsonAnswerFormat(structuredOutputOf({ type: 'json_object' })!), {});
  assert.deepEqual(jsonAnswerFormat(format), { schema, name: 'trip' });
});

test('a schema that does not compile is a 400 naming where it was given', () => {
  assert.throws(() => structuredOutputOf({ type: 'json_schema', json_schema: { name: 'x', schema: { type: 'nonsense' } } }),
    (error: Error & { statusCode?: number }) => error.statusCode === 400 && /response_format\.json_schema\.schema/.test(error.message));
});

test('the whole answer is checked: JSON, an object for json_object, valid for the schema', () => {
  assert.deepEqual(checkStructuredAnswer('{"city":"Porto","days":2}', format), { city: 'Porto', days: 2 });
  const fails = (text: string, output = format, message?: RegExp) => assert.throws(() => checkStructuredAnswer(text, output),
    (error: Error) => error instanceof StructuredOutputError && (message === undefined || message.test(error.message)));
  fails('Sure! Here is your trip: Porto for two days.', format, /not JSON \(it begins "Sure! Here is your trip/);
  fails('{"city":"Porto"}', format, /does not match the schema trip: answer\.days is required/);
  fails('{"city":"Porto","days":0}', format, /answer\.days: must be >= 1/);
  fails('{"city":"Porto","days":2,"extra":1}', format, /extra/);
  fails('[1,2]', { kind: 'json_object' }, /not an object/);
  assert.deepEqual(checkStructuredAnswer('{"any":true}', { kind: 'json_object' }), { any: true });
});
