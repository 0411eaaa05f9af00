import fastJsonStringify from 'fast-json-stringify';
import type { FastifySerializerCompiler } from 'fastify';

type Serialize = (data: unknown) => string;

/** What Fastify's own compiler builds for a response schema (the app adds no shared schemas for it to pass along). */
export function buildSerializer(schema: object): Serialize {
  return fastJsonStringify(schema) as Serialize;
}

/**
 * Each response schema is built into its serializer at the first response that uses it, not at the server's start,
 * where building every route's took about a twelfth of the start-up CPU (as validators do, http/validator.ts;
 * test/unit/http/route-schemas.test.ts builds them all).
 */
export const serializerCompiler: FastifySerializerCompiler<object> = ({ schema }) => {
  let serialize: Serialize | undefined;
  return (data) => (serialize ??= buildSerializer(schema))(data);
};
