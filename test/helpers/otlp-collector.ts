import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import type { Cleanup } from './gateway.ts';

/** A span as an OTLP/HTTP JSON export carries it, with attributes flattened to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  status: { code?: number; message?: string };
  events: Array<{ name: string; attributes: Record<string, unknown> }>;
  /** The exporting process's resource (service.name …). */
  resource: Record<string, unknown>;
}

export interface OtlpCollector {
  /** The base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (the exporter adds /v1/traces). */
  url: string;
  spans(): ReceivedSpan[];
  /** The bodies of OTLP/HTTP protobuf exports (the SDK's default protocol), as received. */
  protobufExports(): Buffer[];
  /** Export requests received, whatever their content. */
  requestCount(): number;
}

/**
 * A stand-in for an OpenTelemetry collector on 127.0.0.1: it accepts OTLP/HTTP JSON trace exports
 * (OTEL_EXPORTER_OTLP_PROTOCOL=http/json) at /v1/traces and keeps every span; protobuf exports are kept as bytes.
 */
export async function startOtlpCollector(t: Cleanup): Promise<OtlpCollector> {
  const spans: ReceivedSpan[] = [];
  const protobufExports: Buffer[] = [];
  let requests = 0;
  const server = http.createServer(async (request, response) => {
    requests += 1;
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const type = request.headers['content-type'] ?? '';
    if (request.method === 'POST' && request.url === '/v1/traces' && type.startsWith('application/x-protobuf')) {
      // Kept undecoded; an empty ExportTraceServiceResponse is zero bytes.
      protobufExports.push(Buffer.concat(chunks));
      response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
      return;
    }
    if (request.method !== 'POST' || request.url !== '/v1/traces' || !type.startsWith('application/json')) {
      response.writeHead(400).end();
      return;
    }
    spans.push(...decodeExport(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
    response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () => [...spans],
    protobufExports: () => [...protobufExports],
    requestCount: () => requests,
  };
}

/**
 * Starts a collector for a `describe` block, before the block's gateways (call it before `useGateway`), and adds to
 * `env` (the object given to those gateways) the variables that make them export their spans to it.
 */
export function useOtlpCollector(env: Record<string, string>): () => OtlpCollector {
  let collector: OtlpCollector | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  before(async () => {
    collector = await startOtlpCollector({ after: (fn) => cleanups.push(fn) });
    Object.assign(env, exportingTo(collector));
  });
  after(async () => { for (const cleanup of cleanups) await cleanup(); });
  return () => collector!;
}

/** The environment that makes a gateway export its spans here, each within 100 ms of its end. */
export function exportingTo(collector: OtlpCollector): Record<string, string> {
  return {
    OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '100',
  };
}

type KeyValue = { key: string; value: AnyValue };
type AnyValue = { stringValue?: string; boolValue?: boolean; intValue?: number | string; doubleValue?: number; arrayValue?: { values?: AnyValue[] } };
type JsonSpan = {
  traceId: string; spanId: string; parentSpanId?: string; name: string; attributes?: KeyValue[];
  status?: { code?: number; message?: string }; events?: Array<{ name: string; attributes?: KeyValue[] }>;
};
type ExportRequest = { resourceSpans?: Array<{ resource?: { attributes?: KeyValue[] }; scopeSpans?: Array<{ spans?: JsonSpan[] }> }> };

function decodeExport(body: ExportRequest): ReceivedSpan[] {
  return (body.resourceSpans ?? []).flatMap((resourceSpans) => {
    const resource = attributesOf(resourceSpans.resource?.attributes);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) => (scope.spans ?? []).map((span) => ({
      traceId: span.traceId,
      spanId: span.spanId,
      ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
      name: span.name,
      attributes: attributesOf(span.attributes),
      status: span.status ?? {},
      events: (span.events ?? []).map((event) => ({ name: event.name, attributes: attributesOf(event.attributes) })),
      resource,
    })));
  });
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

function valueOf(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}
