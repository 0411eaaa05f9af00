import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSystemPrompt } from '../../../src/workflows/agent-calls/system-prompt.ts';
import { findRolePreset } from '../../../src/workflows/agent-calls/role-presets.ts';
import { parseTaskSettings } from '../../../src/workflows/runtime/task-settings.ts';

const promptOf = (context: Record<string, unknown>) => buildSystemPrompt(parseTaskSettings(context, {}));

test('fills ${name} placeholders from prompt_params and leaves unknown ones', () => {
  const prompt = promptOf({ system_prompt: 'Hi ${who}, use ${tone} and ${missing}', prompt_params: { who: 'Ada', tone: 2 } });
  assert.equal(prompt, 'Hi Ada, use 2 and ${missing}');
});

test('falls back to the role preset, then to the generalist', () => {
  assert.equal(promptOf({ role: 'critic' }), findRolePreset('critic')!.systemPrompt);
  assert.equal(promptOf({}), findRolePreset('generalist')!.systemPrompt);
  assert.equal(promptOf({ system_prompt: '   ' }), findRolePreset('generalist')!.systemPrompt);
});
