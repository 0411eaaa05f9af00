import type { FastifySchema, RouteOptions } from 'fastify';

/**
 * How a route appears in the OpenAPI 3.0 document. Our schemas are JSON Schema 2020 (TypeBox, validated by
 * Ajv), where `exclusiveMinimum: 0` is a number; OpenAPI 3.0 wants `minimum: 0, exclusiveMinimum: true`.
 * Public routes (probes, register, login, refresh) say that they need no credential with `security: []`.
 */
export function documentRoute({ schema, url, route }: { schema: FastifySchema; url: string; route: RouteOptions }): { schema: FastifySchema; url: string } {
  const documented = toOpenApi30(schema) as FastifySchema & { security?: unknown[] };
  if (route.config?.public) documented.security = [];
  return { schema: documented, url };
}

function toOpenApi30(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(toOpenApi30);
  if (value === null || typeof value !== 'object') return value;
  const result: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) result[key] = toOpenApi30(child);
  for (const [exclusive, inclusive] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof result[exclusive] === 'number') {
      result[inclusive] = result[exclusive];
      result[exclusive] = true;
    }
  }
  return result;
}
