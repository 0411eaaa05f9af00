import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { findViolation, loadPolicy, maxTokenBudget, type Policy } from '../../../src/policy/policy.ts';

const subject = { tenantId: 't-1', tenantSlug: 'acme', plan: 'free', role: 'member' };
const request = { mode: 'simple', models: ['mock-small'], providers: ['mock'], tokenBudget: undefined };

test('the example policy file loads and applies its rules by plan and role', () => {
  const policy = loadPolicy(path.resolve('config/policy.example.yaml'), undefined);
  assert.equal(policy.mode, 'enforce');
  assert.match(findViolation(policy, subject, { ...request, mode: 'supervisor' }) ?? '', /mode supervisor is not allowed \(policy rule free-plan-limits\)/);
  assert.match(findViolation(policy, subject, { ...request, models: ['mock-large'] }) ?? '', /model mock-large/);
  assert.equal(findViolation(policy, { ...subject, plan: 'pro', role: 'owner' }, { ...request, mode: 'supervisor', models: ['mock-large'] }), undefined);
  assert.equal(maxTokenBudget(policy, subject), 200000);
  assert.equal(loadPolicy(path.resolve('config/policy.example.yaml'), 'dry-run').mode, 'dry-run');
});

test('budget, provider and allow-list rules', () => {
  const policy: Policy = { mode: 'enforce', rules: [{ name: 'r', tenants: ['acme'], max_token_budget: 100, allowed_modes: ['simple'], allowed_providers: ['mock'] }] };
  assert.match(findViolation(policy, subject, { ...request, tokenBudget: 101 }) ?? '', /token budget 101 exceeds the maximum of 100/);
  assert.equal(findViolation(policy, subject, { ...request, tokenBudget: 100 }), undefined);
  assert.match(findViolation(policy, subject, { ...request, mode: undefined }) ?? '', /mode auto is not allowed/);
  assert.match(findViolation(policy, subject, { ...request, providers: ['openai'] }) ?? '', /provider openai/);
  assert.equal(findViolation(policy, { ...subject, tenantSlug: 'other', tenantId: 'x' }, { ...request, tokenBudget: 1e9 }), undefined);
});

test('no file means no rules; an invalid file names the problem', () => {
  assert.deepEqual(loadPolicy(undefined, undefined), { mode: 'off', rules: [] });
  assert.throws(() => loadPolicy(path.resolve('config/models.yaml'), undefined), /invalid policy file/);
});
