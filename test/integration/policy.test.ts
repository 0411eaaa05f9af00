import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { useGateway, waitFor } from '../helpers/gateway.ts';

const policyFile = path.join(os.tmpdir(), `agentgate-policy-${process.pid}.yaml`);
writeFileSync(policyFile, [
  'mode: enforce',
  'rules:',
  '  - name: dev-tenant-limits',
  '    tenants: [dev]',
  '    denied_modes: [supervisor]',
  '    max_token_budget: 5000',
  '    allowed_models: [mock-small, mock-medium]',
].join('\n'));
after(() => rmSync(policyFile, { force: true }));

describe('policy engine in enforce mode', () => {
  const gateway = useGateway({ env: { POLICY_FILE: policyFile } });

  it('denies a forbidden mode, budget or model with 403 and the reason, and writes no task', async () => {
    for (const [body, reason] of [
      [{ query: 'x', mode: 'supervisor' }, /mode supervisor is not allowed \(policy rule dev-tenant-limits\)/],
      [{ query: 'x', context: { token_budget: 9000 } }, /token budget 9000 exceeds the maximum of 5000/],
      [{ query: 'x', model_tier: 'large' }, /model mock-large is not allowed/],
    ] as const) {
      const answer = await gateway().request('POST', '/api/v1/tasks', body);
      assert.equal(answer.status, 403, answer.text);
      assert.match(answer.body.error, /^Policy denied: /);
      assert.match(answer.body.error, reason, answer.text);
    }
    const { rows } = await gateway().sql.query('select count(*)::int as count from tasks');
    assert.equal(rows[0].count, 0);
    const allowed = await gateway().request('POST', '/api/v1/tasks', { query: 'fine', mode: 'simple', model_tier: 'medium' });
    assert.equal(allowed.status, 200);
  });
});

describe('policy engine in dry-run mode', () => {
  const gateway = useGateway({ env: { POLICY_FILE: policyFile, POLICY_MODE: 'dry-run' } });

  it('lets the request through and logs what it would deny', async () => {
    const answer = await gateway().request('POST', '/api/v1/tasks', { query: 'x', mode: 'supervisor' });
    assert.equal(answer.status, 200);
    await waitFor('the dry-run log line', async () => (gateway().output().includes('policy would deny') ? true : undefined));
    assert.match(gateway().output(), /mode supervisor is not allowed/);
  });
});
