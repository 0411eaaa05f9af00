import { trace } from '@opentelemetry/api';

/**
 * pino mixin while tracing is on: every line logged inside a span (a workflow step, an agent, a tool call)
 * carries its trace and span ids, so logs and traces find each other.
 */
export function traceLogFields(): Record<string, string> {
  const span = trace.getActiveSpan();
  if (!span) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}
