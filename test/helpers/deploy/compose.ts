import { createRequire } from 'node:module';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { readRepoFile } from './repo-files.ts';

/** A Compose file as Compose reads it: YAML 1.1 merge keys (`<<: *anchor`) resolved, duplicate keys refused. */
export function parseCompose(text: string): any {
  return parse(text, { merge: true });
}

let composeValidator: ReturnType<Ajv['compile']> | undefined;

/** Problems against the Compose Specification's JSON schema (vendored in deploy/schemas/, see its README). */
export function composeProblems(compose: unknown): string[] {
  composeValidator ??= compileComposeSchema();
  if (composeValidator(compose)) return [];
  return (composeValidator.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);
}

function compileComposeSchema(): ReturnType<Ajv['compile']> {
  const schema = JSON.parse(readRepoFile('deploy/schemas/compose-spec.json'));
  // The upstream schema names draft-07 by its https address, which ajv knows under http; its loose types are upstream's.
  const draft7 = createRequire(import.meta.url)('ajv/dist/refs/json-schema-draft-07.json');
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strictTypes: false });
  ajv.addMetaSchema({ ...draft7, $id: schema.$schema });
  return ajv.compile(schema);
}
