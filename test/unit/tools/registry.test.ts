import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_IN_TOOLS } from '../../../src/tools/built-ins.ts';
import { compileToolSchema, createToolRegistry } from '../../../src/tools/create-registry.ts';
import type { ToolContext, ToolDefinition } from '../../../src/tools/registry.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

const context = (signal = new AbortController().signal): ToolContext => offlineToolContext({ signal });

function echoTool(overrides: Partial<ToolDefinition> = {}): ToolDefinition {
  return {
    name: 'echo', description: 'Echoes its text', category: 'test', costPerUseUsd: 0, dangerous: false, effects: 'none',
    parameters: { type: 'object', properties: { text: { type: 'string', maxLength: 10 } }, required: ['text'], additionalProperties: false },
    execute: async (input) => ({ echoed: input.text }),
    ...overrides,
  };
}

test('a valid call runs the tool and returns its output', async () => {
  const registry = createToolRegistry([echoTool()]);
  assert.deepEqual(await registry.invoke('echo', { text: 'hi' }, context()), { output: { echoed: 'hi' } });
  assert.equal(registry.get('echo')?.name, 'echo');
  assert.deepEqual(registry.list(context().tenantId).map((tool) => tool.name), ['echo']);
});

test('an input that breaks the schema is an error naming the problem, and the tool does not run', async () => {
  let runs = 0;
  const registry = createToolRegistry([echoTool({ execute: async () => { runs += 1; return null; } })]);
  const missing = await registry.invoke('echo', {}, context());
  assert.match(missing.error!, /invalid input for echo: input must have required property 'text'/);
  const tooLong = await registry.invoke('echo', { text: 'far too long for it' }, context());
  assert.match(tooLong.error!, /input\/text must NOT have more than 10 characters/);
  const extra = await registry.invoke('echo', { text: 'ok', shell: 'rm -rf /' }, context());
  assert.match(extra.error!, /must NOT have additional properties/);
  const notAnObject = await registry.invoke('echo', '{"text": broken', context());
  assert.match(notAnObject.error!, /input must be object/);
  assert.equal(runs, 0);
});

test('an unknown tool is an error, not a crash', async () => {
  const registry = createToolRegistry([echoTool()]);
  assert.deepEqual(await registry.invoke('rm', { path: '/' }, context()), { error: 'unknown tool: rm' });
  assert.equal(registry.get('rm'), undefined);
});

test('a tool that throws reports its message as the error; an output JSON cannot carry is an error too', async () => {
  const registry = createToolRegistry([echoTool({ execute: async () => { throw new Error('upstream down'); } })]);
  assert.deepEqual(await registry.invoke('echo', { text: 'hi' }, context()), { error: 'upstream down' });
  const bigint = createToolRegistry([echoTool({ execute: async () => ({ count: 10n }) })]);
  assert.match((await bigint.invoke('echo', { text: 'hi' }, context())).error!, /BigInt/);
  const dated = createToolRegistry([echoTool({ execute: async () => ({ at: new Date(0) }) })]);
  assert.deepEqual(await dated.invoke('echo', { text: 'hi' }, context()), { output: { at: '1970-01-01T00:00:00.000Z' } }, 'as it will be replayed');
});

test('an abort is thrown, and a tool that ignores its signal is abandoned', async () => {
  const registry = createToolRegistry([echoTool({ execute: () => new Promise(() => {}) })]);
  const controller = new AbortController();
  const call = registry.invoke('echo', { text: 'hi' }, context(controller.signal));
  setTimeout(() => controller.abort(new Error('task cancelled')), 20);
  await assert.rejects(call, /task cancelled/);
});

test('a tool without output answers null; a name registered twice fails at creation; a schema that does not compile makes each call an error naming the tool', async () => {
  const registry = createToolRegistry([echoTool({ execute: async () => undefined })]);
  assert.deepEqual(await registry.invoke('echo', { text: 'hi' }, context()), { output: null });
  assert.throws(() => createToolRegistry([echoTool(), echoTool()]), /tool echo is registered twice/);
  let runs = 0;
  const broken = createToolRegistry([echoTool({ parameters: { type: 'object', properties: { text: { type: 'nonsense' as never } } }, execute: async () => ++runs })]);
  assert.deepEqual(await broken.invoke('echo', { text: 'hi' }, context()), { error: 'tool echo has parameters that are not a valid JSON schema' });
  assert.equal(runs, 0);
});

// The registry compiles a schema at the tool's first use: every built-in's is compiled here.
test('every built-in tool\'s parameters compile', () => {
  for (const tool of BUILT_IN_TOOLS) assert.doesNotThrow(() => compileToolSchema(tool), tool.name);
  assert.ok(BUILT_IN_TOOLS.length > 20, `${BUILT_IN_TOOLS.length} built-in tools`);
});

test('a tool enabled for some tenants does not exist for the others: not listed, not found, run as an unknown tool', async () => {
  let runs = 0;
  const enabled = '11111111-1111-4111-8111-111111111111';
  const registry = createToolRegistry([echoTool()], () => [echoTool({ name: 'srv__echo', tenants: new Set([enabled]), execute: async () => ++runs })]);
  const other = context();
  assert.notEqual(other.tenantId, enabled);
  assert.deepEqual(registry.list(other.tenantId).map((tool) => tool.name), ['echo']);
  assert.deepEqual(registry.list(enabled).map((tool) => tool.name), ['echo', 'srv__echo']);
  assert.equal(registry.find('srv__echo', other.tenantId), undefined);
  assert.equal(registry.find('srv__echo', enabled)?.name, 'srv__echo');
  assert.deepEqual(await registry.invoke('srv__echo', { text: 'hi' }, other), { error: 'unknown tool: srv__echo' });
  assert.deepEqual(await registry.invoke('srv__nothing', { text: 'hi' }, other), { error: 'unknown tool: srv__nothing' });
  assert.equal(runs, 0);
  assert.deepEqual(await registry.invoke('srv__echo', { text: 'hi' }, { ...other, tenantId: enabled }), { output: 1 });
});
