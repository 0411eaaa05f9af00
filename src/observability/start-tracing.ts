import { diag, DiagLogLevel, type DiagLogger } from '@opentelemetry/api';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { AlwaysOffSampler, AlwaysOnSampler, ParentBasedSampler, TraceIdRatioBasedSampler, type Sampler } from '@opentelemetry/sdk-trace';
import pTimeout from 'p-timeout';
import type { Logger } from 'pino';
import type { TraceSampler } from '../config.ts';
import { hasCallerParent } from './trace-carrier.ts';

/** Flushing what is buffered may not hold up the rest of shutdown when the collector does not answer. */
const SHUTDOWN_WAIT_MS = 5_000;

export interface Tracing {
  /** Ends the SDK, exporting the spans still buffered. */
  shutdown(): Promise<void>;
}

/**
 * Starts the OpenTelemetry SDK for traces only: the exporter, its protocol and endpoint, the sampler, the batch
 * delays and the resource come from the standard OTEL_* variables, read by the SDK itself. Metrics stay with
 * Prometheus (/metrics) and logs with pino, so the SDK's own metrics and logs exporters (which it would otherwise
 * start by default) are off. main.ts loads this module only when tracing is on.
 */
export function startTracing(logger: Logger, serviceVersion: string, sampler: TraceSampler): Tracing {
  const log = logger.child({ component: 'opentelemetry' });
  // Export failures are the SDK's diagnostics: they reach our log instead of vanishing (OTEL_LOG_LEVEL overrides).
  diag.setLogger(diagnosticsLogger(log), DiagLogLevel.WARN);
  const sdk = new NodeSDK({
    // The lowest priority: OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES, read by the SDK's detectors, win.
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': 'agentgate', 'service.version': serviceVersion })),
    sampler: gatewaySampler(sampler),
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  log.info('traces are exported (OpenTelemetry; the OTEL_* variables say where)');
  return {
    // Never throws: spans that cannot be sent are lost, which must not stop the rest of the shutdown.
    shutdown: () => pTimeout(sdk.shutdown(), {
      milliseconds: SHUTDOWN_WAIT_MS,
      fallback: () => log.warn('spans still unexported at shutdown were dropped: the collector did not answer in time'),
    }).catch((error: unknown) => log.warn({ err: error }, 'spans still unexported at shutdown were dropped')),
  };
}

/**
 * The configured sampler, except that a caller's sampled flag decides nothing: for a span whose parent is a
 * caller's, the sampler's root decides (a `parentbased_*` sampler would otherwise follow the caller, so that any
 * caller could force export at ratio 0, or hide their requests from the traces). The span stays in the caller's
 * trace. Below a span of ours (a task's run below its submission, a step below its run), the parent's decision holds.
 */
function gatewaySampler(setting: TraceSampler): Sampler {
  const roots = { always_on: new AlwaysOnSampler(), always_off: new AlwaysOffSampler(), traceidratio: new TraceIdRatioBasedSampler(setting.ratio) };
  const rootName = setting.name.replace(/^parentbased_/, '') as keyof typeof roots;
  const root = roots[rootName];
  const configured = setting.name.startsWith('parentbased_') ? new ParentBasedSampler({ root }) : root;
  return {
    shouldSample: (context, ...rest) => (hasCallerParent(context) ? root : configured).shouldSample(context, ...rest),
    toString: () => `GatewaySampler{${configured.toString()}; a caller's parent: ${root.toString()}}`,
  };
}

function diagnosticsLogger(logger: Logger): DiagLogger {
  return {
    error: (message, ...args) => logger.error({ details: args }, message),
    warn: (message, ...args) => logger.warn({ details: args }, message),
    info: (message, ...args) => logger.info({ details: args }, message),
    debug: (message, ...args) => logger.debug({ details: args }, message),
    verbose: (message, ...args) => logger.trace({ details: args }, message),
  };
}
