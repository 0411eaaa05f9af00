import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseKeyCommand } from '../../../src/auth/cli.ts';

test('the keys command reads its flags in both forms', () => {
  assert.deepEqual(parseKeyCommand(['create', '--email', 'a@example.test']), { email: 'a@example.test', tenantName: undefined, name: 'admin', environment: 'live' });
  assert.deepEqual(parseKeyCommand(['create', '--email=a@example.test', '--tenant=Acme', '--name', 'ci', '--test']),
    { email: 'a@example.test', tenantName: 'Acme', name: 'ci', environment: 'test' });
});

test('the keys command refuses what it does not understand, with its usage', () => {
  for (const args of [[], ['create'], ['delete', '--email', 'a@example.test'], ['create', '--email', 'a@example.test', '--admin'], ['create', 'extra', '--email', 'a@example.test'], ['create', '--email']]) {
    assert.throws(() => parseKeyCommand(args), /usage: npm run keys/, args.join(' '));
  }
});
