import { once } from 'node:events';
import net from 'node:net';
import type { AddressInfo } from 'node:net';

/** A port on 127.0.0.1 that nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = net.createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  server.close();
  await once(server, 'close');
  return port;
}
