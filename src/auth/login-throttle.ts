import type { Db } from '../db/database.ts';
import { tooManyRequests } from '../errors.ts';
import { countHit, peekHits, throttle } from '../http/fixed-window.ts';

const IP_WINDOW_SECONDS = 60;
const FAILURE_WINDOW_SECONDS = 15 * 60;

export interface ThrottleLimits { perIp: number; perAccount: number }

/**
 * Every attempt counts against the IP. Failures lock the (account, IP) pair for 15 minutes, never the
 * account itself: keyed by account alone, anyone who knows an email could lock its owner out.
 */
export async function checkLoginAllowed(db: Db, limits: ThrottleLimits, ip: string, email: string): Promise<void> {
  await throttle(db, `login:ip:${ip}`, IP_WINDOW_SECONDS, limits.perIp, 'Too many login attempts');
  const failures = await peekHits(db, failureKey(email, ip), FAILURE_WINDOW_SECONDS);
  if (failures >= limits.perAccount) throw tooManyRequests(FAILURE_WINDOW_SECONDS, 'Too many failed logins for this account; try again later');
}

export async function recordLoginFailure(db: Db, email: string, ip: string): Promise<void> {
  await countHit(db, failureKey(email, ip), FAILURE_WINDOW_SECONDS);
}

const failureKey = (email: string, ip: string) => `login:account-ip:${ip}:${email}`;
