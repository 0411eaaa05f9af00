import WebSocket from 'ws';

export interface WebSocketResult {
  /** Every message, parsed as JSON. */
  events: any[];
  closeCode: number;
  closeReason: string;
  /** The HTTP status of a refused upgrade, with the error of its body when it had one. */
  status?: number;
  error?: unknown;
}

/** Reads a WebSocket stream until it closes, or the HTTP answer when the upgrade is refused. */
export function readWebSocket(url: string, headers: Record<string, string> = {}): Promise<WebSocketResult> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const events: any[] = [];
    socket.on('message', (data) => events.push(JSON.parse(String(data))));
    socket.on('close', (code, reason) => resolve({ events, closeCode: code, closeReason: String(reason) }));
    socket.on('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk) => { body += chunk; });
      response.on('end', () => {
        resolve({ events, closeCode: 0, closeReason: '', status: response.statusCode, ...(body ? { error: JSON.parse(body).error } : {}) });
        socket.terminate();
      });
    });
    socket.on('error', (error) => { if (!events.length) reject(error); });
  });
}
