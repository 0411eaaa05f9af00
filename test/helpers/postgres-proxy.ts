import { once } from 'node:events';
import net from 'node:net';

export interface PostgresProxy {
  /** `databaseUrl` with its host and port replaced by the proxy's. */
  url: string;
  close(): Promise<void>;
}

/** NotificationResponse, the message that carries a NOTIFY to a listening session (PostgreSQL protocol, message formats). */
const NOTIFICATION_RESPONSE = 'A'.charCodeAt(0);

/**
 * A TCP proxy in front of the Postgres of `databaseUrl`. With `dropNotifications` it keeps every message from the
 * server except the notifications, which is how a session behind a transaction-mode pooler sees LISTEN: the
 * notification goes to whichever server connection ran the LISTEN, not to the client.
 * Assumes no TLS (the test servers' connections are plain).
 */
export async function startPostgresProxy(databaseUrl: string, options: { dropNotifications: boolean }): Promise<PostgresProxy> {
  const target = new URL(databaseUrl);
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => { client.destroy(); upstream.destroy(); });
      socket.on('close', () => { sockets.delete(socket); client.destroy(); upstream.destroy(); });
    }
    client.pipe(upstream);
    if (!options.dropNotifications) upstream.pipe(client);
    else forwardDroppingNotifications(upstream, client);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = new URL(databaseUrl);
  url.host = `127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  // An embedded server's URL names its Unix socket too, which would go around the proxy.
  url.searchParams.delete('host');
  return {
    url: url.toString(),
    async close() {
      for (const socket of sockets) socket.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

/** Server messages are a type byte and a length that counts itself (the start-up exchange included, with no TLS). */
function forwardDroppingNotifications(from: net.Socket, to: net.Socket): void {
  let pending = Buffer.alloc(0);
  from.on('data', (chunk: Buffer) => {
    pending = Buffer.concat([pending, chunk]);
    const kept: Buffer[] = [];
    while (pending.length >= 5 && pending.length >= 1 + pending.readInt32BE(1)) {
      const size = 1 + pending.readInt32BE(1);
      if (pending[0] !== NOTIFICATION_RESPONSE) kept.push(pending.subarray(0, size));
      pending = pending.subarray(size);
    }
    if (kept.length > 0) to.write(Buffer.concat(kept));
  });
}
