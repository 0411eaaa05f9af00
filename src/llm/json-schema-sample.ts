/**
 * The smallest plausible value that satisfies a JSON schema: every declared property, one array
 * item, the lowest allowed number. Lets the mock model answer structured-output calls offline.
 * `pattern` and `multipleOf` are not honoured.
 */
type SchemaNode = { readonly [keyword: string]: unknown };

const maxDepth = 32;

export function sampleFromJsonSchema(schema: unknown): unknown {
  return sample(schema, { root: schema, name: 'value', depth: 0 });
}

type Context = { root: unknown; name: string; depth: number };

function sample(schema: unknown, context: Context): unknown {
  if (schema === true || schema === undefined) return `mock ${context.name}`;
  if (!isNode(schema) || context.depth > maxDepth) return null;
  const next = { ...context, depth: context.depth + 1 };
  if (typeof schema.$ref === 'string') return sample(resolveReference(context.root, schema.$ref), next);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Array.isArray(schema.allOf)) return sample(mergeAll(schema.allOf.filter(isNode)), next);
  const options = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(options)) return sample(options.find((option) => !isNullSchema(option)) ?? options[0], next);
  switch (pickType(schema)) {
    case 'object': return sampleObject(schema, next);
    case 'array': return sampleArray(schema, next);
    case 'string': return sampleString(schema, context.name);
    case 'integer': return sampleNumber(schema, true);
    case 'number': return sampleNumber(schema, false);
    case 'boolean': return false;
    case 'null': return null;
    default: return `mock ${context.name}`;
  }
}

function pickType(schema: SchemaNode): unknown {
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const type = types.find((candidate) => candidate !== 'null') ?? types[0];
  if (type !== undefined) return type;
  if (isNode(schema.properties)) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  return undefined;
}

function sampleObject(schema: SchemaNode, context: Context): Record<string, unknown> {
  const properties = isNode(schema.properties) ? schema.properties : {};
  return Object.fromEntries(Object.entries(properties)
    .map(([name, property]) => [name, sample(property, { ...context, name })]));
}

function sampleArray(schema: SchemaNode, context: Context): unknown[] {
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems
    : Array.isArray(schema.items) ? schema.items : [];
  const items = Array.isArray(schema.items) ? undefined : schema.items;
  const minimum = typeof schema.minItems === 'number' ? schema.minItems : 0;
  const maximum = typeof schema.maxItems === 'number' ? schema.maxItems : Infinity;
  const count = Math.min(Math.max(1, minimum, tuple.length), maximum);
  return Array.from({ length: count }, (_, index) =>
    sample(index < tuple.length ? tuple[index] : items, { ...context, name: `${context.name} ${index + 1}` }));
}

const formatSamples: Record<string, string> = {
  'date-time': '2000-01-01T00:00:00.000Z',
  date: '2000-01-01',
  time: '00:00:00Z',
  email: 'mock@example.com',
  uri: 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
};

function sampleString(schema: SchemaNode, name: string): string {
  const format = typeof schema.format === 'string' ? formatSamples[schema.format] : undefined;
  if (format !== undefined) return format;
  const minimum = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maximum = typeof schema.maxLength === 'number' ? schema.maxLength : Infinity;
  return `mock ${name}`.padEnd(minimum, '.').slice(0, maximum);
}

function sampleNumber(schema: SchemaNode, isInteger: boolean): number {
  const step = isInteger ? 1 : 0.5;
  const lower = typeof schema.minimum === 'number' ? schema.minimum
    : typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum + step : undefined;
  const upper = typeof schema.maximum === 'number' ? schema.maximum
    : typeof schema.exclusiveMaximum === 'number' ? schema.exclusiveMaximum - step : undefined;
  const value = lower ?? Math.min(1, upper ?? 1);
  return isInteger ? Math.ceil(value) : value;
}

function mergeAll(schemas: SchemaNode[]): SchemaNode {
  const withProperties = schemas.filter((schema) => isNode(schema.properties));
  if (withProperties.length === 0) return Object.assign({}, ...schemas);
  const properties = Object.assign({}, ...withProperties.map((schema) => schema.properties));
  return Object.assign({}, ...schemas, { properties });
}

function resolveReference(root: unknown, reference: string): unknown {
  if (!reference.startsWith('#')) return undefined;
  const segments = reference.slice(1).split('/').filter(Boolean)
    .map((segment) => decodeURIComponent(segment).replaceAll('~1', '/').replaceAll('~0', '~'));
  return segments.reduce<unknown>((node, segment) => (isNode(node) ? node[segment] : undefined), root);
}

function isNullSchema(schema: unknown): boolean {
  return isNode(schema) && schema.type === 'null';
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
