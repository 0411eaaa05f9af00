import type { ErrorObject } from 'ajv';
import { describeValidation } from '../http/error-handler.ts';

/**
 * Names the argument and the rule it broke, as the other routes name a body field:
 * `arguments.expression is required`, `invalid arguments.values.2: must be number`.
 */
export function describeArgumentErrors(errors: ErrorObject[]): string {
  const [first] = errors;
  const field = `arguments${first.instancePath.replaceAll('/', '.')}`;
  if (first.keyword === 'required') return `${field}.${String(first.params.missingProperty)} is required`;
  if (first.keyword === 'additionalProperties') return `${field}.${String(first.params.additionalProperty)} is not an argument of this tool`;
  return describeValidation('arguments', errors);
}
