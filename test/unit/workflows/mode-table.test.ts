import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MODE_TABLE, modeEntryFor, refuseUnservedRequest, SERVED_MODES } from '../../../src/workflows/mode-table.ts';
import { parseTaskSettings } from '../../../src/workflows/runtime/task-settings.ts';

const refusalOf = (request: Parameters<typeof refuseUnservedRequest>[0]) => {
  try {
    refuseUnservedRequest(request);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
};

describe('the mode table', () => {
  it('serves exactly the modes that have a runner, and every mode once', () => {
    assert.deepEqual(SERVED_MODES, MODE_TABLE.filter((entry) => entry.run).map((entry) => entry.mode));
    assert.equal(new Set(MODE_TABLE.map((entry) => entry.mode)).size, MODE_TABLE.length);
    for (const mode of ['simple', 'standard', 'complex', 'supervisor', 'auto', 'template', 'research', 'swarm', 'skill', 'named_agent']) assert.ok(SERVED_MODES.includes(mode), mode);
  });

  it('routes a template task to the template runner whatever its mode, and others by mode', () => {
    const templated = parseTaskSettings({ template: 'fixed-report' }, {});
    assert.equal(modeEntryFor(templated, 'simple')?.mode, 'template');
    assert.equal(modeEntryFor(parseTaskSettings({}, {}), 'supervisor')?.mode, 'supervisor');
    assert.equal(modeEntryFor(parseTaskSettings({}, {}), 'no-such-mode'), undefined);
    assert.equal(modeEntryFor(parseTaskSettings({ agent: 'keyword-extract' }, {}), 'simple')?.mode, 'named_agent');
    assert.equal(modeEntryFor(parseTaskSettings({ force_swarm: true }, {}), 'auto')?.mode, 'swarm');
    assert.equal(modeEntryFor(parseTaskSettings({ force_swarm: false }, {}), 'auto')?.mode, 'auto');
  });

  it('routes a task whose submission pinned a skill to the skill runner', () => {
    const pinned = parseTaskSettings({ skill: 'code-review' }, { skill: { name: 'code-review', version: '1.0.0', content_hash: 'h', instructions: 'Review.' } });
    assert.equal(modeEntryFor(pinned, 'auto')?.mode, 'skill');
    assert.equal(refusalOf({ context: { skill: 'code-review' }, options: {} }), undefined);
  });

  it('refuses by name what only an unserved mode accepts, choosers first', () => {
    assert.equal(refusalOf({ context: { agent: 'calc', agent_input: {} }, options: {} }), undefined, 'named agents are served (the catalogue checks the id)');
    assert.match(refusalOf({ context: { agent_input: {} }, options: {} })!, /^context\.agent_input applies to named_agent tasks only: set context\.agent to an agent id/);
    assert.match(refusalOf({ context: {}, options: { max_iterations: 3 } })!, /^max_iterations applies to research tasks only: set context\.force_research to true to run one$/);
    assert.match(refusalOf({ mode: 'swarm', context: {}, options: {} })!, /^mode swarm is not available .*available: simple, standard, complex, supervisor\)$/);
  });

  it('lets through what a served mode runs and flags set to false', () => {
    assert.equal(refusalOf({ mode: 'supervisor', context: { template: 'x', force_research: false, force_swarm: false }, options: { enable_verification: false, max_concurrent_agents: 3 } }), undefined);
  });
});
