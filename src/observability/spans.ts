import { context, SpanStatusCode, trace, type Attributes, type Context, type Span } from '@opentelemetry/api';
import type { ToolOutcome } from '../tools/registry.ts';

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

/**
 * A tool call as a span (OpenTelemetry's GenAI convention for executing a tool), with its outcome; a tool that ran
 * and failed marks the span failed as a throw would.
 */
export function inToolSpan(toolName: string, options: SpanOptions, invoke: () => Promise<ToolOutcome>): Promise<ToolOutcome> {
  const attributes = { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': toolName, ...options.attributes };
  return inSpan(`execute_tool ${toolName}`, { ...options, attributes }, async (span) => {
    const outcome = await invoke();
    span.setAttribute('agentgate.tool.outcome', outcome.error === undefined ? 'success' : 'error');
    if (outcome.error !== undefined) markFailed(span, outcome.error);
    return outcome;
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
