import type { FastifyRequest } from 'fastify';
import { hashApiKey, hashesMatch } from '../auth/api-key-secret.ts';
import { bearerToken } from '../auth/authenticate.ts';
import type { EnvironmentName, MetricsSettings } from '../config.ts';
import { AppError, forbidden } from '../errors.ts';

export interface MetricsAccessOptions {
  settings: Readonly<MetricsSettings>;
  environment: EnvironmentName;
  /** True on the listener of its own (METRICS_PORT): its bind address is its protection. */
  onOwnListener: boolean;
}

/**
 * Who may read /metrics. With METRICS_TOKEN set, only a request with `Authorization: Bearer <token>` (compared
 * as SHA-256 digests in constant time, so neither the token nor its length leaks through timing). Without it,
 * anyone in development and test, and on a listener of its own; in production the API listener refuses,
 * naming the settings: /metrics tells whoever reads it about the deployment's load, models and spending.
 */
export function createMetricsAccessCheck(options: MetricsAccessOptions): (request: FastifyRequest) => Promise<void> {
  const { token } = options.settings;
  const tokenDigest = token === undefined ? undefined : hashApiKey(token);
  const isUnprotected = tokenDigest === undefined && !options.onOwnListener && options.environment === 'production';
  return async (request) => {
    if (isUnprotected) {
      throw forbidden('metrics are not served in production without protection: set METRICS_TOKEN (scrapers then send Authorization: Bearer <token>) or METRICS_PORT (metrics on a listener of their own)');
    }
    if (tokenDigest !== undefined && !hashesMatch(hashApiKey(bearerToken(request.headers.authorization) ?? ''), tokenDigest)) {
      throw new AppError(401, 'metrics require Authorization: Bearer <METRICS_TOKEN>', { headers: { 'www-authenticate': 'Bearer realm="metrics"' } });
    }
  };
}
