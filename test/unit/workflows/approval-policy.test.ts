import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createToolRegistry } from '../../../src/tools/create-registry.ts';
import type { ToolDefinition } from '../../../src/tools/registry.ts';
import { approvalReason } from '../../../src/workflows/runtime/approval-gate.ts';
import { parseTaskSettings } from '../../../src/workflows/runtime/task-settings.ts';

const tool = (name: string, dangerous: boolean): ToolDefinition => ({
  name, dangerous, description: name, parameters: { type: 'object' }, category: 'test', costPerUseUsd: 0, execute: async () => null,
});
const tools = createToolRegistry([tool('shell_runner', true), tool('calculator', false)]);
const depsWith = (env: Record<string, string> = {}) => ({ config: loadConfig(env), tools });
const taskWith = (context: Record<string, unknown>) => ({ settings: parseTaskSettings(context, {}) });
const plainTask = taskWith({});
const simplePlan = { complexityScore: 0.1, suggestedTools: [] };

test('a task that asks for approval needs it, whatever the configuration and the plan', () => {
  const reason = approvalReason(depsWith(), taskWith({ require_approval: true }), simplePlan);
  assert.match(reason ?? '', /require_approval/);
  assert.equal(approvalReason(depsWith(), taskWith({ require_approval: 'yes' }), simplePlan), undefined, 'only the boolean true asks');
});

test('approvals are off by default: no plan needs one', () => {
  assert.equal(approvalReason(depsWith(), plainTask, { complexityScore: 0.99, suggestedTools: ['bash'] }), undefined);
});

test('enabled, a plan at or above the complexity threshold needs approval, one below does not', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true' });
  assert.match(approvalReason(deps, plainTask, { complexityScore: 0.5, suggestedTools: [] }) ?? '', /complexity score 0.5 .*threshold 0.5/);
  assert.equal(approvalReason(deps, plainTask, { complexityScore: 0.49, suggestedTools: [] }), undefined);
  assert.equal(approvalReason(deps, plainTask, { complexityScore: null, suggestedTools: [] }), undefined, 'no score, no complexity rule');
  const strict = depsWith({ APPROVAL_ENABLED: '1', APPROVAL_COMPLEXITY_THRESHOLD: '0.2' });
  assert.ok(approvalReason(strict, plainTask, { complexityScore: 0.3, suggestedTools: [] }));
});

test('enabled, a plan suggesting a dangerous tool needs approval and names the tools', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true' });
  assert.match(approvalReason(deps, plainTask, { complexityScore: 0.1, suggestedTools: ['web_search', 'bash', 'python_executor'] }) ?? '', /dangerous tools: bash, python_executor$/);
  assert.equal(approvalReason(deps, plainTask, { complexityScore: 0.1, suggestedTools: ['web_search'] }), undefined);
});

test('a tool the registry marks dangerous needs approval too, when approvals are enabled', () => {
  assert.match(approvalReason(depsWith({ APPROVAL_ENABLED: 'true' }), plainTask, { complexityScore: null, suggestedTools: ['shell_runner'] }) ?? '', /shell_runner/);
  assert.equal(approvalReason(depsWith({ APPROVAL_ENABLED: 'true' }), plainTask, { complexityScore: null, suggestedTools: ['unknown_tool'] }), undefined);
  assert.equal(approvalReason(depsWith(), plainTask, { complexityScore: null, suggestedTools: ['shell_runner'] }), undefined);
});

test('the dangerous tools come from APPROVAL_DANGEROUS_TOOLS, a comma list', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true', APPROVAL_DANGEROUS_TOOLS: ' web_search , calculator' });
  assert.deepEqual(deps.config.approvals.dangerousTools, ['web_search', 'calculator']);
  assert.ok(approvalReason(deps, plainTask, { complexityScore: null, suggestedTools: ['calculator'] }));
  assert.equal(approvalReason(deps, plainTask, { complexityScore: null, suggestedTools: ['bash'] }), undefined);
});

test('approval settings default to Shannon\'s and reject bad values', () => {
  const { approvals } = loadConfig({});
  assert.deepEqual(approvals, {
    enabled: false, complexityThreshold: 0.5, timeoutSeconds: 1800, sweepIntervalMs: 5000,
    dangerousTools: ['file_system', 'code_execution', 'bash', 'file_write', 'python_executor'],
  });
  assert.throws(() => loadConfig({ APPROVAL_COMPLEXITY_THRESHOLD: '1.5' }), /APPROVAL_COMPLEXITY_THRESHOLD/);
  assert.throws(() => loadConfig({ APPROVAL_ENABLED: 'maybe' }), /APPROVAL_ENABLED/);
});
