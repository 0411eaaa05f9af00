import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pino } from 'pino';
import { openMcpServer } from '../../../../src/tools/mcp/mcp-server.ts';
import { waitFor } from '../../../helpers/gateway.ts';

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

// A connection attempt that failed after the server had started (its tools could not be listed) was left open:
// each retry started one more stdio server, which lived on with nobody reading it.
test('an MCP server whose tools cannot be listed is retried, and each failed attempt\'s connection is closed: one server process at most', { timeout: 60_000 }, async (t) => {
  const directory = mkdtempSync(path.join(os.tmpdir(), 'agentgate-mcp-retry-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const pidLog = path.join(directory, 'pids');
  const server = openMcpServer({
    name: 'failing', transport: 'stdio', command: process.execPath,
    args: [path.resolve(import.meta.dirname, '../../../fixtures/mcp-test-server.ts')],
    env: { MCP_TEST_PID_LOG: pidLog, MCP_TEST_FAIL_LISTING: '1' }, timeout_ms: 5_000, tenants: ['*'],
  }, pino({ level: 'silent' }), 65_536);
  t.after(() => server.close());
  const started = () => {
    try {
      return readFileSync(pidLog, 'utf8').trim().split('\n').map(Number);
    } catch {
      return [];
    }
  };

  const pids = await waitFor('three attempts to connect', async () => (started().length >= 3 ? started() : undefined), 30_000);
  assert.deepEqual(server.tools(), [], 'no tools while they cannot be listed');
  await waitFor('the failed attempts\' servers to end', async () => (pids.slice(0, -1).every((pid) => !isAlive(pid)) ? true : undefined), 5_000)
    .catch(() => assert.fail(`servers of failed attempts still running: ${pids.filter(isAlive).join(', ')} of ${pids.join(', ')}`));
});
