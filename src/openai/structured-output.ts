import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ValidateFunction } from 'ajv';
import { Type, type Static } from 'typebox';
import type { JsonAnswerFormat } from '../llm/stream-model-text.ts';
import { describeArgumentErrors } from '../tools-api/argument-errors.ts';
import { compileClientSchema } from './json-schemas.ts';

/**
 * Structured output (OpenAI `response_format` / the Responses API's `text.format`), shared by both layers: the
 * format asks the model for JSON (of the schema, when there is one), and the whole answer is checked once it is in.
 * An answer that is not JSON, or not of the schema, is an error: prose is never passed off as JSON.
 */

export const JsonSchemaFormat = Type.Object({
  name: Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' }),
  description: Type.Optional(Type.String()),
  schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
}, { additionalProperties: false });
export type JsonSchemaFormat = Static<typeof JsonSchemaFormat>;

export const ResponseFormat = Type.Union([
  Type.Object({ type: Type.Literal('text') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_object') }, { additionalProperties: false }),
  Type.Object({ type: Type.Literal('json_schema'), json_schema: JsonSchemaFormat }, { additionalProperties: false }),
]);
export type ResponseFormat = Static<typeof ResponseFormat>;

/** What a task stores of the format: JSON-safe, so it rides in the task's context. */
export type StructuredOutput = { kind: 'json_object' } | { kind: 'json_schema'; name: string; description?: string; schema: JSONSchema7 };

const ANY_OBJECT: JSONSchema7 = { type: 'object' };

/** The format asked for, checked (a schema that does not compile is a 400); undefined for plain text. */
export function structuredOutputOf(format: ResponseFormat | undefined, field = 'response_format'): StructuredOutput | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { kind: 'json_object' };
  return jsonSchemaOutput(format.json_schema, `${field}.json_schema`);
}

/** A named schema (chat's `response_format.json_schema`, the Responses API's `text.format`); `field` names it in errors. */
export function jsonSchemaOutput({ name, description, schema }: JsonSchemaFormat, field: string): StructuredOutput {
  const checked = (schema ?? ANY_OBJECT) as JSONSchema7;
  compileClientSchema(checked, `${field}.schema`);
  return { kind: 'json_schema', name, ...(description === undefined ? {} : { description }), schema: checked };
}

/** The request to the model (stream-model-text.ts `jsonAnswer`). */
export function jsonAnswerFormat(output: StructuredOutput): JsonAnswerFormat {
  if (output.kind === 'json_object') return {};
  return { schema: output.schema, name: output.name, ...(output.description === undefined ? {} : { description: output.description }) };
}

/** Thrown when the model's answer is not the JSON asked for; the message says what is wrong with it. */
export class StructuredOutputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StructuredOutputError';
  }
}

const validators = new WeakMap<JSONSchema7, ValidateFunction>();

/** Checks the whole answer: JSON, an object for `json_object`, and valid for the schema. Returns the parsed value. */
export function checkStructuredAnswer(text: string, output: StructuredOutput): unknown {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new StructuredOutputError(`the model's answer is not JSON (it begins "${text.trim().slice(0, 60)}")`);
  }
  if (output.kind === 'json_object') {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new StructuredOutputError('the model\'s answer is JSON but not an object');
    return value;
  }
  const validate = validators.get(output.schema) ?? compileOnce(output.schema);
  if (!validate(value)) {
    const problem = describeArgumentErrors(validate.errors ?? []).replace(/^(invalid )?arguments/, '$1answer');
    throw new StructuredOutputError(`the model's answer does not match the schema ${output.name}: ${problem}`);
  }
  return value;
}

function compileOnce(schema: JSONSchema7): ValidateFunction {
  const validate = compileClientSchema(schema, 'schema');
  validators.set(schema, validate);
  return validate;
}
