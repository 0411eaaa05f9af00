import { badRequest } from '../errors.ts';

/**
 * The review version a client says it saw (spec 4.3 `If-Match`): `3`, `"3"` or `W/"3"`, as clients send back the
 * ETag we gave (the bare version, as the reference sends it). Absent or `*`: any version.
 */
export function expectedVersion(header: string | string[] | undefined): number | undefined {
  const value = (Array.isArray(header) ? header[0] : header)?.trim();
  if (value === undefined || value === '' || value === '*') return undefined;
  const match = /^(?:W\/)?"?(\d{1,9})"?$/.exec(value);
  if (!match) throw badRequest(`If-Match must be the review's version, as its ETag gives it (got ${JSON.stringify(value.slice(0, 40))})`);
  return Number(match[1]);
}
