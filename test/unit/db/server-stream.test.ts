import assert from 'node:assert/strict';
import { once } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import pg from 'pg';
import { isDatabaseUnavailable } from '../../../src/db/database-errors.ts';
import { serverStream } from '../../../src/db/server-stream.ts';

test('a Unix socket whose server is down (its file gone) is refused like a TCP port nobody listens on', async () => {
  const socket = serverStream();
  socket.connect(path.join(os.tmpdir(), `agentgate-no-server-${process.pid}`, '.s.PGSQL.5432'));
  const [error] = await once(socket, 'error') as [NodeJS.ErrnoException];
  assert.equal(error.code, 'ECONNREFUSED');
  assert.ok(isDatabaseUnavailable(error));
});

test('pg connects through it and reports the outage by that code', async () => {
  const client = new pg.Client({ host: path.join(os.tmpdir(), `agentgate-no-server-${process.pid}`), port: 5432, stream: serverStream });
  await assert.rejects(client.connect(), (error: NodeJS.ErrnoException) => error.code === 'ECONNREFUSED' && isDatabaseUnavailable(error));
});
