import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';

export type ParsedAnswer<T> = { ok: true; value: T } | { ok: false; problem: string };

/** A model's structured answer checked against the schema it was asked for; a sentence saying what is wrong otherwise. */
export function parseModelAnswer<Schema extends TSchema>(schema: Schema, value: unknown): ParsedAnswer<Static<Schema>> {
  if (Value.Check(schema, value)) return { ok: true, value };
  const first = Value.Errors(schema, value)[0];
  return { ok: false, problem: `the answer does not fit the schema (${first?.instancePath || '/'}: ${first?.message ?? 'invalid'})` };
}

/** The 1-based citation numbers of `numbers` that name one of `citationCount` citations, each once, in order. */
export function validCitationNumbers(numbers: readonly number[], citationCount: number): number[] {
  return [...new Set(numbers.filter((number) => Number.isInteger(number) && number >= 1 && number <= citationCount))];
}
