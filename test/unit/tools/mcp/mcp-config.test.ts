import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { enabledTenants, loadMcpConfig } from '../../../../src/tools/mcp/mcp-config.ts';

const directory = mkdtempSync(path.join(tmpdir(), 'agentgate-mcp-config-'));
after(() => rmSync(directory, { recursive: true, force: true }));

function configWith(tenants: string | undefined): string {
  const file = path.join(directory, `mcp-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, ['servers:', '  - name: srv', '    transport: http', '    url: http://127.0.0.1:9/mcp', ...(tenants ? [`    tenants: ${tenants}`] : [])].join('\n'));
  return file;
}

test('a server is enabled for the tenants it names, for all with \'*\', and for none when it names none', () => {
  const id = 'AAAAAAAA-1111-4111-8111-111111111111';
  assert.deepEqual(enabledTenants(loadMcpConfig(configWith(`["${id}"]`))[0]), new Set([id.toLowerCase()]));
  assert.equal(enabledTenants(loadMcpConfig(configWith('["*"]'))[0]), undefined);
  assert.deepEqual(enabledTenants(loadMcpConfig(configWith(undefined))[0]), new Set());
});

test('a tenant named by anything but its id is refused, naming the server and the entry', () => {
  assert.throws(() => loadMcpConfig(configWith('[acme]')), /server srv: tenants are tenant ids \(UUIDs\) or '\*', not "acme"/);
  assert.throws(() => loadMcpConfig(configWith('all')), /\/servers\/0\/tenants/);
});
