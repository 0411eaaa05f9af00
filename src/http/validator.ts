import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import type { FastifySchemaCompiler } from 'fastify';

function createAjv(coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, strict: false });
  addFormats.default(ajv);
  return ajv;
}

// Query strings and path params arrive as text, so they are coerced ("20" → 20). JSON bodies are
// not: `"max_iterations": "5"` is a wrong type and must answer 400, not pass as 5.
const coercing = createAjv(true);
const strict = createAjv(false);

export const validatorCompiler: FastifySchemaCompiler<object> = ({ schema, httpPart }) =>
  (httpPart === 'body' ? strict : coercing).compile(schema);
