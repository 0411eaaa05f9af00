import { context, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';

/**
 * The gateway's tracer. Until the SDK is started (start-tracing.ts) it is the API's no-op: spans cost an object or
 * two and go nowhere.
 */
const tracer = trace.getTracer('agentgate');

export interface SpanOptions {
  /** The parent; by default the active span (none: a new trace). */
  parent?: Context;
  attributes?: Attributes;
}

/** Runs `work` as the active span `name`, ending the span with the work; a throw marks it failed. */
export function inSpan<T>(name: string, options: SpanOptions, work: (span: Span) => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes: options.attributes }, options.parent ?? context.active(), async (span) => {
    try {
      return await work(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

export function markFailed(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/** Whether work here is traced: a recording span is active (never while tracing is off). */
export function isTracedHere(): boolean {
  return trace.getActiveSpan()?.isRecording() === true;
}
