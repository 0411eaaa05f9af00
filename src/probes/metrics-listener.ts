import Fastify, { type FastifyBaseLogger } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { Deps } from '../deps.ts';
import { installErrorHandler } from '../http/error-handler.ts';
import { metricsRoute } from './routes.ts';

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * /metrics alone on METRICS_HOST:METRICS_PORT, e.g. a pod-internal port that Prometheus scrapes and no ingress
 * exposes. Every role has one when the port is set, so worker processes, which serve no API, are scraped too.
 */
export async function startMetricsListener(deps: Deps, port: number): Promise<MetricsListener> {
  const app = Fastify({ loggerInstance: deps.logger.child({ component: 'metrics-listener' }) as FastifyBaseLogger, disableRequestLogging: true })
    .withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandler(app);
  metricsRoute(app, deps, { onOwnListener: true });
  const url = await app.listen({ host: deps.config.metrics.host, port });
  return { url, close: () => app.close() };
}
