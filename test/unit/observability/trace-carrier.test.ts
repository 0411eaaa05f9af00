import assert from 'node:assert/strict';
import { test } from 'node:test';
import { trace, TraceFlags } from '@opentelemetry/api';
import { extractTraceContext, injectTraceContext, traceIdOf } from '../../../src/observability/trace-carrier.ts';

const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

test('a valid traceparent becomes a remote parent with its trace id, span id and sampling flag', () => {
  const context = extractTraceContext({ traceparent: TRACEPARENT });
  assert.ok(context);
  assert.equal(traceIdOf(context), '4bf92f3577b34da6a3ce929d0e0e4736');
  assert.deepEqual(trace.getSpanContext(context), {
    traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED, isRemote: true,
  });
});

test('an unsampled traceparent stays unsampled', () => {
  const context = extractTraceContext({ traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00' });
  assert.equal(trace.getSpanContext(context!)?.traceFlags, TraceFlags.NONE);
});

test('malformed, all-zero, upper-case or version ff traceparents are ignored', () => {
  for (const value of ['garbage', '', '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    '00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01', '00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01',
    '00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01', 'ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
    `${TRACEPARENT}-extra`, 42, undefined]) {
    assert.equal(extractTraceContext({ traceparent: value }), undefined, String(value));
  }
  assert.equal(extractTraceContext({}), undefined);
});

test('a later version is read as W3C Trace Context asks, from its first four fields', () => {
  const context = extractTraceContext({ traceparent: '01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-more' });
  assert.equal(traceIdOf(context!), '4bf92f3577b34da6a3ce929d0e0e4736');
});

test('tracestate travels with the traceparent, and a stored carrier gives back the same context', () => {
  const context = extractTraceContext({ traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' });
  const carrier = injectTraceContext(context!);
  assert.deepEqual(carrier, { traceparent: TRACEPARENT, tracestate: 'vendor=abc,other=1' });
  const restored = trace.getSpanContext(extractTraceContext(carrier)!)!;
  assert.equal(restored.spanId, '00f067aa0ba902b7');
  assert.equal(restored.traceState?.get('vendor'), 'abc');
});

test('a context without a span gives an empty carrier', () => {
  assert.deepEqual(injectTraceContext(trace.deleteSpan(extractTraceContext({ traceparent: TRACEPARENT })!)), {});
});
