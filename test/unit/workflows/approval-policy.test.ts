import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadConfig } from '../../../src/config.ts';
import { createToolRegistry } from '../../../src/tools/create-registry.ts';
import type { ToolDefinition } from '../../../src/tools/registry.ts';
import { approvalNeed, recordedApprovalNeed, toolNeedsApproval } from '../../../src/workflows/runtime/approval-need.ts';
import { parseTaskSettings } from '../../../src/workflows/runtime/task-settings.ts';

const tool = (name: string, dangerous: boolean): ToolDefinition => ({
  name, dangerous, description: name, parameters: { type: 'object' }, category: 'test', costPerUseUsd: 0, effects: 'none', execute: async () => null,
});
const tools = createToolRegistry([tool('shell_runner', true), tool('calculator', false), tool('bash', true), tool('python_executor', true)]);
const depsWith = (env: Record<string, string> = {}) => ({ config: loadConfig(env), tools });
const taskWith = (context: Record<string, unknown>, options: Record<string, unknown> = {}) => ({ settings: parseTaskSettings(context, options) });
const plainTask = taskWith({});
const simplePlan = { complexityScore: 0.1, offeredTools: [] };
const reasonOf = (...args: Parameters<typeof approvalNeed>) => approvalNeed(...args)?.reason;

test('a task that asks for approval needs it, whatever the configuration and the plan; its owner may decide it', () => {
  const need = approvalNeed(depsWith(), taskWith({ require_approval: true }), simplePlan);
  assert.deepEqual(need, { reason: 'the task asks for approval (context.require_approval)', tools: [], needsOtherApprover: false });
  assert.equal(approvalNeed(depsWith(), taskWith({ require_approval: 'yes' }), simplePlan), undefined, 'only the boolean true asks');
});

test('a policy rule\'s approval must come from an approver other than the requester', () => {
  const need = approvalNeed(depsWith(), taskWith({}, { approval_rule: 'members-need-approval' }), simplePlan);
  assert.deepEqual(need, { reason: 'policy rule members-need-approval requires approval', tools: [], needsOtherApprover: true });
});

test('approvals are off by default: no plan needs one, unless its agents may run bash', () => {
  assert.equal(approvalNeed(depsWith(), plainTask, { complexityScore: 0.99, offeredTools: ['bash', 'python_executor'] }), undefined);
  const withBash = approvalNeed(depsWith({ TOOLS_BASH_ENABLED: '1' }), plainTask, { complexityScore: 0.1, offeredTools: ['bash', 'python_executor'] });
  assert.deepEqual(withBash, { reason: 'its agents may run bash commands on the server', tools: ['bash'], needsOtherApprover: true });
});

test('enabled, a plan at or above the complexity threshold needs approval, one below does not', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true' });
  assert.match(reasonOf(deps, plainTask, { complexityScore: 0.5, offeredTools: [] }) ?? '', /complexity score 0.5 .*threshold 0.5/);
  assert.equal(approvalNeed(deps, plainTask, { complexityScore: 0.5, offeredTools: [] })?.needsOtherApprover, false);
  assert.equal(approvalNeed(deps, plainTask, { complexityScore: 0.49, offeredTools: [] }), undefined);
  assert.equal(approvalNeed(deps, plainTask, { complexityScore: null, offeredTools: [] }), undefined, 'no score, no complexity rule');
  const strict = depsWith({ APPROVAL_ENABLED: '1', APPROVAL_COMPLEXITY_THRESHOLD: '0.2' });
  assert.ok(approvalNeed(strict, plainTask, { complexityScore: 0.3, offeredTools: [] }));
});

test('enabled, agents offered a dangerous tool need approval, which names the tools and needs another approver', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true' });
  assert.deepEqual(approvalNeed(deps, plainTask, { complexityScore: 0.1, offeredTools: ['calculator', 'bash', 'python_executor'] }), {
    reason: 'its agents are offered dangerous tools: bash, python_executor', tools: ['bash', 'python_executor'], needsOtherApprover: true,
  });
  assert.equal(approvalNeed(deps, plainTask, { complexityScore: 0.1, offeredTools: ['calculator'] }), undefined);
});

test('a task that asks for approval and is offered dangerous tools gets one approval covering them, for another approver', () => {
  const need = approvalNeed(depsWith({ APPROVAL_ENABLED: 'true' }), taskWith({ require_approval: true }), { complexityScore: 0.1, offeredTools: ['python_executor'] });
  assert.deepEqual(need?.tools, ['python_executor']);
  assert.equal(need?.needsOtherApprover, true);
});

test('a tool the registry marks dangerous needs approval too, when approvals are enabled', () => {
  assert.match(reasonOf(depsWith({ APPROVAL_ENABLED: 'true' }), plainTask, { complexityScore: null, offeredTools: ['shell_runner'] }) ?? '', /shell_runner/);
  assert.equal(approvalNeed(depsWith({ APPROVAL_ENABLED: 'true' }), plainTask, { complexityScore: null, offeredTools: ['unknown_tool'] }), undefined);
  assert.equal(approvalNeed(depsWith(), plainTask, { complexityScore: null, offeredTools: ['shell_runner'] }), undefined);
});

test('the dangerous tools come from APPROVAL_DANGEROUS_TOOLS, a comma list', () => {
  const deps = depsWith({ APPROVAL_ENABLED: 'true', APPROVAL_DANGEROUS_TOOLS: ' web_search , calculator' });
  assert.deepEqual(deps.config.approvals.dangerousTools, ['web_search', 'calculator']);
  assert.equal(toolNeedsApproval(deps, 'calculator'), true);
  assert.equal(toolNeedsApproval(deps, 'web_search'), true, 'listed, though the registry does not have it');
  assert.equal(toolNeedsApproval(depsWith({ APPROVAL_DANGEROUS_TOOLS: 'calculator' }), 'calculator'), false, 'only with approvals enabled');
});

test('a decision recorded before approvals named tools reads as its reason alone', () => {
  assert.deepEqual(recordedApprovalNeed('complexity score 0.7 is at or above the approval threshold 0.5'),
    { reason: 'complexity score 0.7 is at or above the approval threshold 0.5', tools: [], needsOtherApprover: false });
  assert.equal(recordedApprovalNeed(null), undefined);
});

test('approval settings default to Shannon\'s and reject bad values', () => {
  const { approvals } = loadConfig({});
  assert.deepEqual(approvals, {
    enabled: false, complexityThreshold: 0.5, timeoutSeconds: 1800, sweepIntervalMs: 5000,
    dangerousTools: ['file_system', 'code_execution', 'bash', 'file_write', 'python_executor'], approverRoles: ['owner', 'admin'],
  });
  assert.deepEqual(loadConfig({ APPROVAL_APPROVER_ROLES: 'owner' }).approvals.approverRoles, ['owner']);
  assert.throws(() => loadConfig({ APPROVAL_APPROVER_ROLES: 'owner,boss' }), /APPROVAL_APPROVER_ROLES.*boss/);
  assert.throws(() => loadConfig({ APPROVAL_APPROVER_ROLES: ' , ' }), /APPROVAL_APPROVER_ROLES/);
  assert.throws(() => loadConfig({ APPROVAL_COMPLEXITY_THRESHOLD: '1.5' }), /APPROVAL_COMPLEXITY_THRESHOLD/);
  assert.throws(() => loadConfig({ APPROVAL_ENABLED: 'maybe' }), /APPROVAL_ENABLED/);
});
