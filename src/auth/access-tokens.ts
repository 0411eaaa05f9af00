import { createHash, randomBytes } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Role } from './caller.ts';
import { isUuid } from '../uuid.ts';

const ISSUER = 'agentgate';
const AUDIENCE = 'agentgate-api';

export interface AccessClaims {
  userId: string;
  tenantId: string;
  role: Role;
}

const secretKey = (secret: string) => new TextEncoder().encode(secret);

export async function issueAccessToken(secret: string, ttlSeconds: number, claims: AccessClaims): Promise<string> {
  return new SignJWT({ tid: claims.tenantId, role: claims.role, typ: 'access' })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.userId)
    .setIssuer(ISSUER)
    .setAudience(AUDIENCE)
    .setIssuedAt()
    .setExpirationTime(`${ttlSeconds}s`)
    .sign(secretKey(secret));
}


/**
 * Verifies signature, algorithm (HS256 only: no `none`, no key confusion), issuer, audience, expiry, and
 * that every claim the issuer sets is present; the ids must be UUIDs before they reach a query.
 */
export async function verifyAccessToken(secret: string, token: string): Promise<AccessClaims | undefined> {
  try {
    const { payload } = await jwtVerify(token, secretKey(secret), {
      issuer: ISSUER, audience: AUDIENCE, algorithms: ['HS256'], requiredClaims: ['exp', 'iat', 'sub', 'tid', 'role', 'typ'],
    });
    if (payload.typ !== 'access' || !isUuid(payload.sub) || !isUuid(payload.tid) || typeof payload.role !== 'string') return undefined;
    return { userId: payload.sub, tenantId: payload.tid, role: payload.role as Role };
  } catch {
    return undefined;
  }
}

/** Refresh tokens are opaque random strings; only their SHA-256 is stored. */
export function generateRefreshToken(): { token: string; hash: string } {
  const token = `rt_${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashRefreshToken(token) };
}

export const hashRefreshToken = (token: string) => createHash('sha256').update(token).digest('hex');
