import { Ajv, type ErrorObject, type Options, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import draft06 from 'ajv/dist/refs/json-schema-draft-06.json' with { type: 'json' };
import addFormats from 'ajv-formats';

/**
 * Schemas from outside (a client's tool parameters and answer format, an MCP server's tools) in the dialect each
 * names in `$schema`. Without one a schema is read as draft-07, the most lenient reading: a 2020-12 keyword it
 * does not know is ignored, where reading a draft-07 schema as 2020-12 would refuse its `items` lists.
 */
const DIALECTS = {
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-06/schema': 'draft-07',
  'https://json-schema.org/draft/2019-09/schema': '2019-09',
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
} as const;
type Dialect = typeof DIALECTS[keyof typeof DIALECTS];

/**
 * Ajv keeps every schema it compiled (and its generated code) for as long as the instance lives, and refuses a
 * second schema with an `$id` it has seen: one instance for every request's schemas grew without end and failed
 * the second request of a client whose schema has an `$id`. So an instance compiles this many schemas, then the
 * next compile starts a new one; the old one goes once the validators it made are dropped. Creating one costs
 * 6–10 ms against 0.4–0.7 ms for a compile.
 */
const COMPILES_PER_INSTANCE = 64;

// Checked as written: no defaults filled in, no coercion; every error reported.
const OPTIONS: Options = { strict: false, allErrors: true, validateSchema: true, addUsedSchema: false };

function newInstance(dialect: Dialect): Ajv {
  const ajv = dialect === '2020-12' ? new Ajv2020(OPTIONS) : dialect === '2019-09' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS);
  if (dialect === 'draft-07') ajv.addMetaSchema(draft06);
  addFormats.default(ajv);
  return ajv;
}

const instances = new Map<Dialect, { ajv: Ajv; compiles: number }>();

function instanceFor(dialect: Dialect): Ajv {
  let current = instances.get(dialect);
  if (!current || current.compiles >= COMPILES_PER_INSTANCE) {
    current = { ajv: newInstance(dialect), compiles: 0 };
    instances.set(dialect, current);
  }
  current.compiles += 1;
  return current.ajv;
}

/** The dialect a schema names; an unknown `$schema` is an error naming it and the ones known. */
function dialectOf(schema: Record<string, unknown>): Dialect {
  const named = schema.$schema;
  if (named === undefined) return 'draft-07';
  const dialect = typeof named === 'string' ? DIALECTS[named.replace(/#$/, '') as keyof typeof DIALECTS] : undefined;
  if (!dialect) throw new Error(`$schema ${JSON.stringify(named)} is not a dialect known here (JSON Schema draft-06, draft-07, 2019-09 or 2020-12)`);
  return dialect;
}

/** Compiles a schema from outside; throws what is wrong with one that does not compile. */
export function compileForeignSchema(schema: unknown): ValidateFunction {
  if (typeof schema !== 'object' || schema === null || Array.isArray(schema)) throw new Error('must be a JSON schema object');
  const record = schema as Record<string, unknown>;
  return instanceFor(dialectOf(record)).compile(record);
}

/** Ajv's account of a validation's errors in one line, e.g. "input must have required property 'text'" (it reads no instance state). */
export function errorsText(errors: ErrorObject[] | null | undefined, dataVar: string): string {
  return Ajv.prototype.errorsText.call(undefined, errors ?? [], { dataVar });
}
