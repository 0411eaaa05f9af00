import net from 'node:net';

/**
 * The stream `pg` opens to the server (its `stream` option), for every connection of ours and of the engine.
 * Connecting to a Unix socket whose server is down fails with ENOENT, since the socket's file goes with the server,
 * where TCP fails with ECONNREFUSED; the engine's retries and ours know the second as an outage, so the first is
 * reported as it.
 */
export const serverStream = (): net.Socket => new ServerSocket();

class ServerSocket extends net.Socket {
  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const error = args[0] as NodeJS.ErrnoException | undefined;
    if (event === 'error' && error?.code === 'ENOENT' && error.syscall === 'connect') error.code = 'ECONNREFUSED';
    return super.emit(event, ...args);
  }
}
