import { createContextKey, defaultTextMapGetter, defaultTextMapSetter, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * W3C trace context (spec 5.12: `traceparent`, `tracestate`) is the one format here, whatever OTEL_PROPAGATORS
 * says: it is how the gateway's clients send it, and how a task keeps the context of its submission.
 */
const w3c = new W3CTraceContextPropagator();

export type TraceCarrier = Record<string, string>;

/**
 * The trace context in headers (or a stored carrier), as a remote parent; undefined when there is none or it is
 * malformed (an invalid `traceparent` is ignored, spec 5.12).
 */
export function extractTraceContext(carrier: Record<string, unknown>): Context | undefined {
  const extracted = w3c.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
  return trace.getSpanContext(extracted) ? extracted : undefined;
}

/** Marks a context whose remote parent is a caller's (not one the gateway stored itself). */
const CALLER_PARENT = createContextKey('agentgate caller parent');

/**
 * A caller's trace context (request headers), marked as theirs: their trace id and span are the parent of what the
 * request starts, but their sampled flag decides nothing here (start-tracing.ts); our own stored carrier's does.
 */
export function callerTraceContext(headers: Record<string, unknown>): Context | undefined {
  return extractTraceContext(headers)?.setValue(CALLER_PARENT, true);
}

/** Whether the parent in this context is a caller's span (a remote parent from a request, not a child of ours). */
export function hasCallerParent(context: Context): boolean {
  return context.getValue(CALLER_PARENT) === true && trace.getSpanContext(context)?.isRemote === true;
}

/** The `traceparent` (and `tracestate`) of a context's span, to store or send on. */
export function injectTraceContext(context: Context): TraceCarrier {
  const carrier: TraceCarrier = {};
  w3c.inject(context, carrier, defaultTextMapSetter);
  return carrier;
}

export function traceIdOf(context: Context): string | undefined {
  return trace.getSpanContext(context)?.traceId;
}
