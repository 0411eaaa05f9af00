import type { Db } from '../db/database.ts';
import { tooManyRequests } from '../errors.ts';
import { countHit, peekHits } from '../http/fixed-window.ts';

const IP_WINDOW_SECONDS = 60;
const ACCOUNT_WINDOW_SECONDS = 15 * 60;

export interface ThrottleLimits { perIp: number; perAccount: number }

/** Every attempt counts against the IP; an account locks after repeated failures within 15 minutes. */
export async function checkLoginAllowed(db: Db, limits: ThrottleLimits, ip: string, email: string): Promise<void> {
  const byIp = await countHit(db, `login:ip:${ip}`, IP_WINDOW_SECONDS);
  if (byIp.count > limits.perIp) throw tooManyRequests(secondsUntil(byIp.resetAt), 'Too many login attempts');
  const failures = await peekHits(db, `login:account:${email}`, ACCOUNT_WINDOW_SECONDS);
  if (failures >= limits.perAccount) throw tooManyRequests(ACCOUNT_WINDOW_SECONDS, 'Too many failed logins for this account; try again later');
}

export async function recordLoginFailure(db: Db, email: string): Promise<void> {
  await countHit(db, `login:account:${email}`, ACCOUNT_WINDOW_SECONDS);
}

const secondsUntil = (unixSeconds: number) => Math.max(1, unixSeconds - Math.floor(Date.now() / 1000));
