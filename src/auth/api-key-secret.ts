import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyEnvironment = 'test' | 'live';

const KEY_PATTERN = /^sk_(test|live)_[A-Za-z0-9_-]{20,100}$/;

/** A new key: `sk_live_` / `sk_test_` plus 32 random bytes; only its SHA-256 is stored. */
export function generateApiKey(environment: KeyEnvironment): { key: string; prefix: string; hash: string } {
  const key = `sk_${environment}_${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, 16), hash: hashApiKey(key) };
}

export const looksLikeApiKey = (value: string) => KEY_PATTERN.test(value);

export const hashApiKey = (key: string) => createHash('sha256').update(key).digest('hex');

export function hashesMatch(left: string, right: string): boolean {
  const a = Buffer.from(left, 'hex');
  const b = Buffer.from(right, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}
