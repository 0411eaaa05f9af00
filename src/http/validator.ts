import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchema, FastifySchemaCompiler } from 'fastify';

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  addFormats.default(ajv);
  return ajv;
}

// Query strings and path params arrive as text, so they are coerced ("20" → 20). JSON bodies are
// not: `"max_iterations": "5"` is a wrong type and must answer 400, not pass as 5.
const coercing = createAjv(true);
const strict = createAjv(false);

/** The parts of a request a route's schema validates. */
export const VALIDATED_PARTS = ['body', 'querystring', 'params', 'headers'] as const satisfies ReadonlyArray<keyof FastifySchema>;

export function compileSchema(schema: object, httpPart: string | undefined): ValidateFunction {
  return (httpPart === 'body' ? strict : coercing).compile(schema);
}

/**
 * Each schema is compiled at its route's first request, not at the server's start, where compiling every route's
 * schemas took about a fifth of the start-up CPU (test/unit/http/route-schemas.test.ts compiles them all). Fastify
 * passes the parent object to a function with `schemaEnv` (as Ajv's have), so that coercion and defaults can
 * replace a root value: the lazy function has it too, and hands that on.
 */
export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) => {
  let compiled: ValidateFunction | undefined;
  const validate = Object.assign((data: unknown, context?: Parameters<ValidateFunction>[1]) => {
    compiled ??= compileSchema(schema, httpPart);
    const valid = compiled(data, context);
    validate.errors = compiled.errors;
    return valid;
  }, { errors: undefined as ValidateFunction['errors'], schemaEnv: true });
  return validate;
};
