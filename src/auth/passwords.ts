import { randomBytes, scrypt, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';
import { badRequest } from '../errors.ts';

const KEY_LENGTH = 64;
const COST = { N: 16384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

function derive(password: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(password.normalize('NFKC'), salt, KEY_LENGTH, options, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

/** `scrypt$N$r$p$salt$hash`, so the cost can be raised later without breaking stored hashes. */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const key = await derive(password, salt, COST);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64'), key.toString('base64')].join('$');
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await derive(password, Buffer.from(salt, 'base64'), { N: Number(n), r: Number(r), p: Number(p), maxmem: COST.maxmem });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A hash of nothing in particular, verified against when the account does not exist, so timing does not reveal it. */
export const DUMMY_PASSWORD_HASH = 'scrypt$16384$8$1$AAAAAAAAAAAAAAAAAAAAAA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==';

/** The dictionaries are decompressed as they load (a few hundred ms): at the first registration, not at the server's start. */
async function loadEstimator(): Promise<ZxcvbnFactory> {
  const [{ ZxcvbnFactory }, common, english] = await Promise.all([import('@zxcvbn-ts/core'), import('@zxcvbn-ts/language-common'), import('@zxcvbn-ts/language-en')]);
  return new ZxcvbnFactory({ dictionary: { ...common.dictionary, ...english.dictionary }, graphs: common.adjacencyGraphs, translations: english.translations });
}

/** zxcvbn's 0–4 scale: 3 means "safely unguessable: moderate protection from offline slow-hash attacks". */
const MINIMUM_SCORE = 3;
let estimator: Promise<ZxcvbnFactory> | undefined;

/** Refuses a password that is easy to guess (common, repeated, keyboard walks, or built from `related` inputs such as the email). */
export async function checkPasswordStrength(password: string, related: string[]): Promise<void> {
  estimator ??= loadEstimator();
  const { score, feedback } = (await estimator).check(password, related.filter(Boolean));
  if (score >= MINIMUM_SCORE) return;
  const reason = feedback.warning ?? feedback.suggestions[0] ?? 'Add more words that are less common.';
  throw badRequest(`invalid password: too easy to guess. ${reason}`);
}
