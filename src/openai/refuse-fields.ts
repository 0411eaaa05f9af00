import { badRequest } from '../errors.ts';

/** A field this layer does not honour: accepted at its value that asks for nothing, refused by name otherwise. */
export type FieldCheck = { isNoOp: (value: unknown) => boolean; why: string };

export const never = () => false;
export const isEmptyList = (value: unknown) => Array.isArray(value) && value.length === 0;
export const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value)
  && Object.values(value).every((entry) => entry === null || entry === undefined);

/**
 * Refuses, with 400 naming it, the first field of `checks` the body sets to something other than null or its no-op
 * value (the value clients and agent frameworks send by default: an empty list, `n: 1`, …). Runs before the body's
 * schema too, so a field the schema does not declare is still refused for its reason rather than as unknown.
 */
export function refuseFields(body: unknown, checks: Record<string, FieldCheck>): void {
  if (typeof body !== 'object' || body === null) return;
  for (const [field, check] of Object.entries(checks)) {
    const value = (body as Record<string, unknown>)[field];
    if (value === undefined || value === null || check.isNoOp(value)) continue;
    throw badRequest(`${field} ${check.why}`);
  }
}
