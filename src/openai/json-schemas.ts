import type { ValidateFunction } from 'ajv';
import { badRequest } from '../errors.ts';
import { compileForeignSchema } from '../json-schemas.ts';

/** Compiles a schema a client sent; a schema that does not compile is a 400 naming where it was given. */
export function compileClientSchema(schema: unknown, field: string): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw badRequest(`invalid ${field}: must be a JSON schema object`);
  try {
    return compileForeignSchema(schema);
  } catch (error) {
    throw badRequest(`invalid ${field}: not a valid JSON schema (${(error as Error).message})`);
  }
}
