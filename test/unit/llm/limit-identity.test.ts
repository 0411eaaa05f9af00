import assert from 'node:assert/strict';
import { test } from 'node:test';
import { limitIdentities } from '../../../src/llm/limit-identity.ts';
import type { ProviderSpec } from '../../../src/llm/model-catalog.ts';

const providers: ProviderSpec[] = [
  { name: 'openai-main', kind: 'openai', apiKeyEnv: 'OPENAI_API_KEY', rpm: 500 },
  { name: 'openai-batch', kind: 'openai', apiKeyEnv: 'OPENAI_BATCH_KEY', rpm: 200, tpm: 90_000 },
  { name: 'openai-other', kind: 'openai', apiKeyEnv: 'OPENAI_OTHER_KEY', rpm: 300 },
  { name: 'anthropic', kind: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' },
  { name: 'local-a', kind: 'openai-compatible', baseUrlEnv: 'LOCAL_A_URL', apiKeyEnv: 'LOCAL_KEY', rpm: 60 },
  { name: 'local-b', kind: 'openai-compatible', baseUrlEnv: 'LOCAL_B_URL', apiKeyEnv: 'LOCAL_KEY', rpm: 60 },
  { name: 'keyless', kind: 'openai-compatible', baseUrlEnv: 'LOCAL_A_URL', rpm: 10 },
  { name: 'mock', kind: 'mock' },
];
const env = {
  OPENAI_API_KEY: 'sk-shared', OPENAI_BATCH_KEY: 'sk-shared', OPENAI_OTHER_KEY: 'sk-other', ANTHROPIC_API_KEY: 'sk-shared',
  LOCAL_A_URL: 'http://a:8000/v1', LOCAL_B_URL: 'http://b:8000/v1', LOCAL_KEY: 'none',
};

test('deployments of one kind sharing an API key share one limit identity with the smallest limits any declares', () => {
  const identities = limitIdentities(providers, env);
  const main = identities.get('openai-main')!;
  assert.match(main.id, /^key:[0-9a-f]{16}$/);
  assert.deepEqual(identities.get('openai-batch'), main);
  assert.deepEqual(main, { id: main.id, rpm: 200, tpm: 90_000 });
  assert.ok(!main.id.includes('sk-shared'), 'the key itself is not stored');
  assert.notEqual(identities.get('openai-other')!.id, main.id, 'another key is another account');
  assert.deepEqual(identities.get('openai-other'), { id: identities.get('openai-other')!.id, rpm: 300 });
});

test('the same key of another kind, or of another OpenAI-compatible server, is counted apart; no key counts under the name', () => {
  const identities = limitIdentities(providers, env);
  assert.notEqual(identities.get('anthropic')!.id, identities.get('openai-main')!.id);
  assert.equal(identities.get('anthropic')!.rpm, undefined);
  assert.notEqual(identities.get('local-a')!.id, identities.get('local-b')!.id, 'two servers with one placeholder key are two machines');
  assert.deepEqual(identities.get('keyless'), { id: 'keyless', rpm: 10 });
  assert.deepEqual(identities.get('mock'), { id: 'mock' });
});

test('a key that is not set leaves the deployment counted under its own name', () => {
  const identities = limitIdentities(providers, { OPENAI_API_KEY: 'sk-shared' });
  assert.deepEqual(identities.get('openai-batch'), { id: 'openai-batch', rpm: 200, tpm: 90_000 });
});
