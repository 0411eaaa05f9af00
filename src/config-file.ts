import { readFileSync } from 'node:fs';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { parseDocument } from 'yaml';

/** A configuration file that cannot be used; the message names the file and every problem found in it. */
export class ConfigFileError extends Error {
  readonly problems: readonly string[];

  constructor(description: string, file: string, problems: string[]) {
    super(`invalid ${description} ${file}:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigFileError';
    this.problems = problems;
  }
}

/** Reads a YAML file that must fit `schema`; a missing, unparseable or ill-shaped file throws naming it. */
export function readYamlConfig<Schema extends TSchema>(file: string, schema: Schema, description: string): Static<Schema> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigFileError(description, file, [(error as Error).message]);
  }
  return parseYamlConfig(text, schema, description, file);
}

/** As `readYamlConfig`, for text already read (tests, inline defaults). */
export function parseYamlConfig<Schema extends TSchema>(text: string, schema: Schema, description: string, source = '(inline)'): Static<Schema> {
  const document = parseDocument(text);
  if (document.errors.length > 0) throw new ConfigFileError(description, source, document.errors.map((error) => error.message));
  const data: unknown = document.toJS();
  if (Value.Check(schema, data)) return data;
  const problems = Value.Errors(schema, data).map((error) => `${error.instancePath || '/'}: ${error.message}`);
  throw new ConfigFileError(description, source, [...new Set(problems)].slice(0, 20));
}
