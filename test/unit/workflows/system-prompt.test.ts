import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSystemPrompt } from '../../../src/workflows/agents/system-prompt.ts';
import { findRolePreset } from '../../../src/workflows/agents/role-presets.ts';

test('fills ${name} placeholders from prompt_params and leaves unknown ones', () => {
  const prompt = buildSystemPrompt({ system_prompt: 'Hi ${who}, use ${tone} and ${missing}', prompt_params: { who: 'Ada', tone: 2 } });
  assert.equal(prompt, 'Hi Ada, use 2 and ${missing}');
});

test('falls back to the role preset, then to the generalist', () => {
  assert.equal(buildSystemPrompt({ role: 'critic' }), findRolePreset('critic')!.systemPrompt);
  assert.equal(buildSystemPrompt({}), findRolePreset('generalist')!.systemPrompt);
  assert.equal(buildSystemPrompt({ system_prompt: '   ' }), findRolePreset('generalist')!.systemPrompt);
});
