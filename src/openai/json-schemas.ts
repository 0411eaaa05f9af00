import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { badRequest } from '../errors.ts';

// Client schemas (tool parameters, structured output) are checked as written: no defaults filled in, no coercion.
const ajv = new Ajv({ strict: false, allErrors: false, validateSchema: true });
addFormats.default(ajv);

/** Compiles a schema a client sent; a schema that does not compile is a 400 naming where it was given. */
export function compileClientSchema(schema: unknown, field: string): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw badRequest(`invalid ${field}: must be a JSON schema object`);
  try {
    return ajv.compile(schema);
  } catch (error) {
    throw badRequest(`invalid ${field}: not a valid JSON schema (${(error as Error).message})`);
  }
}
