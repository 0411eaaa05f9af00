import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createBuiltInToolRegistry } from '../../../../src/tools/built-ins.ts';
import { parseAgentFile, type AgentDefinition } from '../../../../src/workflows/modes/named-agent/agent-file.ts';
import { agentInputProblems, toolArgumentsOf } from '../../../../src/workflows/modes/named-agent/agent-input.ts';

const agent = {
  id: 'every-type', name: 'Every type', description: 'd', category: 'test', tool: 'calculator', file: 'every-type.yaml',
  input_schema: {
    required: ['name', 'count'],
    properties: {
      name: { type: 'string' }, count: { type: 'integer' }, ratio: { type: 'number' }, on: { type: 'boolean' },
      tags: { type: 'array' }, options: { type: 'object' }, level: { type: 'string', enum: ['low', 'high'], default: 'low' },
      size: { type: 'object', enum: [{ w: 1 }, { w: 2 }] },
    },
  },
  output_schema: {}, cost_per_call: 0, timeout_seconds: 10,
} as AgentDefinition;

describe('agent input checks (spec 4.9)', () => {
  it('accepts each type, a whole-number float as an integer, and enum values by deep equality', () => {
    assert.deepEqual(agentInputProblems(agent, { name: 'a', count: 3.0, ratio: 0.5, on: false, tags: [], options: {}, level: 'high', size: { w: 2 } }), []);
    assert.deepEqual(agentInputProblems(agent, { name: 'a', count: 1, ratio: 2 }), [], 'an integer is a number');
  });

  it('names every problem, required fields first', () => {
    assert.deepEqual(agentInputProblems(agent, { ratio: 'x', options: [], tags: {}, size: { w: 3 }, extra: 1 }), [
      'missing required field: name', 'missing required field: count',
      'field ratio must be a number, got string', 'field options must be an object, got array', 'field tags must be an array, got object',
      'field size must be one of {"w":1}, {"w":2}, got {"w":3}', 'unknown field: extra',
    ]);
    assert.deepEqual(agentInputProblems(agent, { name: null, count: null }), ['required field name must not be null', 'required field count must not be null']);
  });

  it('fills the schema\'s defaults for the tool', () => {
    assert.deepEqual(toolArgumentsOf(agent, { name: 'a' }), { level: 'low', name: 'a' });
  });
});

describe('agent catalogue files', () => {
  const tools = createBuiltInToolRegistry();
  const file = (body: string) => parseAgentFile('/x/kw.yaml', body, tools);
  const valid = 'id: kw\nname: K\ndescription: d\ncategory: ads_research\ntool: keyword_extract\ninput_schema:\n  required: [text]\n  properties:\n    text: { type: string }\noutput_schema: {}\ncost_per_call: 0\ntimeout_seconds: 10\n';

  it('reads a valid file', () => assert.ok('agent' in file(valid)));

  it('names what is wrong: a field the tool lacks, a tool requirement left out, the file name, the types', () => {
    assert.deepEqual(file(valid.replace('text: { type: string }', 'text: { type: string }\n    colour: { type: string }')), { problems: ['input_schema: tool keyword_extract has no parameter colour'] });
    assert.deepEqual(file(valid.replace('required: [text]', 'required: []')), { problems: ['input_schema: tool keyword_extract requires text; require it or give it a default'] });
    assert.deepEqual(file(valid.replace('id: kw', 'id: other')), { problems: ['the file of agent other must be named other.yaml'] });
    assert.match((file(valid.replace('type: string', 'type: text')) as { problems: string[] }).problems.join(), /\/input_schema\/properties\/text\/type/);
  });
});
