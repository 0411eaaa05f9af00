import { InvalidArgumentError } from 'commander';

/** Parses a whole non-negative number option; commander reports the message as a usage error. */
export const integer = (name: string) => (value: string): number => {
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0) throw new InvalidArgumentError(`${name} must be a whole number`);
  return number;
};

/** Parses an option holding a JSON object. */
export const jsonObject = (value: string): Record<string, unknown> => {
  try {
    const parsed = JSON.parse(value) as unknown;
    if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed as Record<string, unknown>;
  } catch { /* refused below */ }
  throw new InvalidArgumentError('expected a JSON object, e.g. \'{"key": "value"}\'');
};
