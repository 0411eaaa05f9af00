import http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';

export interface AgentRequest {
  agent: http.Agent;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  path: string;
  headers: Record<string, string>;
}

/**
 * Reads an SSE stream on `agent` until it ends or `onEvent` returns 'stop' (the connection is then
 * destroyed, as a client that has what it needs would close it). Comments are not events.
 */
export function readSse(request: AgentRequest, onEvent: (event: EventSourceMessage) => 'stop' | void): Promise<void> {
  const { hostname, port } = new URL(request.origin);
  return new Promise((resolve, reject) => {
    const outgoing = http.get({ agent: request.agent, host: hostname, port, path: request.path, headers: request.headers });
    let isStopped = false;
    outgoing.once('error', (error) => (isStopped ? resolve() : reject(error)));
    outgoing.once('response', (response) => {
      if (response.statusCode !== 200) {
        response.resume();
        reject(new Error(`GET ${request.path} answered ${response.statusCode}`));
        return;
      }
      const parser = createParser({
        onEvent(event) {
          if (isStopped || onEvent(event) !== 'stop') return;
          isStopped = true;
          outgoing.destroy();
          resolve();
        },
      });
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => parser.feed(chunk));
      response.once('end', () => resolve());
      response.once('close', () => resolve());
    });
  });
}

/** A JSON request on `agent`, so it reuses the agent's kept-alive connections. */
export function requestJson(request: AgentRequest & { method: string; body?: unknown }): Promise<{ status: number; body: unknown }> {
  const { hostname, port } = new URL(request.origin);
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  return new Promise((resolve, reject) => {
    const outgoing = http.request({
      agent: request.agent, host: hostname, port, path: request.path, method: request.method,
      headers: { ...request.headers, ...(payload === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }) },
    }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => { text += chunk; });
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) }));
    });
    outgoing.once('error', reject);
    outgoing.end(payload);
  });
}
