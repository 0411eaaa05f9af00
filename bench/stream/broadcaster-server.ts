/**
 * The ceiling for event fan-out: a bare `node:http` SSE server that keeps its subscribers in memory and
 * writes each event to every subscriber of its channel, with no database, auth or framework. Started by
 * run.ts as a child process, like the gateway, so the clients never share its event loop.
 *   GET  /stream?channel=<n>   subscribe (SSE)
 *   POST /broadcast            {channels, eventsPerChannel, intervalMs, dataBytes}: start; answers 202 at once
 *   GET  /readiness            200
 * Each channel sends `eventsPerChannel` frames shaped like the gateway's LLM_PARTIAL frames (id, event,
 * data with `seq` and `timestamp` set when the frame is written), one every `intervalMs`, then `done`, and
 * ends its streams.
 */
import http from 'node:http';

interface Broadcast {
  channels: number;
  eventsPerChannel: number;
  intervalMs: number;
  /** Length of each frame's `data` line, padded to the gateway's mean. */
  dataBytes: number;
}

const channels = new Map<number, Set<http.ServerResponse>>();

const server = http.createServer((request, response) => {
  const url = new URL(request.url ?? '/', 'http://127.0.0.1');
  if (request.method === 'GET' && url.pathname === '/stream') return subscribe(Number(url.searchParams.get('channel')), request, response);
  if (request.method === 'POST' && url.pathname === '/broadcast') return void readJson(request).then((body) => {
    startBroadcast(body as Broadcast);
    response.writeHead(202).end();
  });
  if (request.method === 'GET' && url.pathname === '/readiness') return void response.writeHead(200).end('ready');
  response.writeHead(404).end();
});

function subscribe(channel: number, request: http.IncomingMessage, response: http.ServerResponse): void {
  let subscribers = channels.get(channel);
  if (!subscribers) channels.set(channel, subscribers = new Set());
  subscribers.add(response);
  request.socket.setTimeout(0);
  response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' });
  response.write(`: connected to channel ${channel}\n\n`);
  response.once('close', () => subscribers.delete(response));
}

function startBroadcast(broadcast: Broadcast): void {
  for (let channel = 0; channel < broadcast.channels; channel += 1) {
    // Channels start spread over one interval, as independent tasks' events are.
    setTimeout(() => broadcastChannel(channel, broadcast), (channel * broadcast.intervalMs) / broadcast.channels);
  }
}

function broadcastChannel(channel: number, broadcast: Broadcast): void {
  const subscribers = channels.get(channel) ?? new Set();
  let seq = 0;
  const timer = setInterval(() => {
    seq += 1;
    const frame = formatFrame(channel, seq, broadcast.dataBytes);
    for (const response of subscribers) response.write(frame);
    if (seq < broadcast.eventsPerChannel) return;
    clearInterval(timer);
    for (const response of subscribers) response.end(`id: ${Date.now()}-end\nevent: done\ndata: [DONE]\n\n`);
  }, broadcast.intervalMs);
}

function formatFrame(channel: number, seq: number, dataBytes: number): string {
  const now = Date.now();
  const event = { workflow_id: `channel-${channel}`, type: 'LLM_PARTIAL', seq, stream_id: `${now}-0`, timestamp: new Date(now).toISOString(), message: '' };
  event.message = 'x'.repeat(Math.max(0, dataBytes - JSON.stringify(event).length));
  return `id: ${event.stream_id}\nevent: thread.message.delta\ndata: ${JSON.stringify(event)}\n\n`;
}

async function readJson(request: http.IncomingMessage): Promise<unknown> {
  let text = '';
  for await (const chunk of request) text += chunk;
  return JSON.parse(text);
}

process.once('SIGTERM', () => {
  server.closeAllConnections();
  server.close();
});
server.listen(Number(process.env.PORT), '127.0.0.1');
