import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { checkResearchRequest, researchRequestProblems, type ResearchRequest } from '../../src/workflows/modes/research/strategy/research-request.ts';
import { resolveResearchSettings } from '../../src/workflows/modes/research/strategy/research-settings.ts';
import { loadResearchStrategies, parseResearchStrategies } from '../../src/workflows/modes/research/strategy/research-strategies.ts';
import { AppError } from '../../src/errors.ts';

const strategies = loadResearchStrategies('config/research-strategies.yaml');
const request = (context: Record<string, unknown> = {}, options: Record<string, unknown> = {}): ResearchRequest => ({ context, options });
const settingsOf = (context: Record<string, unknown> = {}, options: Record<string, unknown> = {}) =>
  resolveResearchSettings(strategies, request(context, options));

describe('research strategy presets', () => {
  it('the shipped presets follow the reference table (§1.7)', () => {
    const table = (['quick', 'standard', 'deep', 'academic'] as const).map((strategy) => {
      const settings = settingsOf({ research_strategy: strategy });
      return [strategy, settings.verification, settings.maxConcurrentAgents, settings.reactMaxIterations, settings.gapFilling.enabled,
        settings.gapFilling.maxGaps, settings.gapFilling.maxIterations, settings.iterative.enabled, settings.iterative.maxIterations,
        settings.modelTiers.agents, settings.modelTiers.utility, settings.modelTiers.synthesis, settings.agentTokenBudgetMin];
    });
    assert.deepEqual(table, [
      ['quick', false, 3, 2, false, 0, 0, false, 3, 'small', 'small', 'medium', undefined],
      ['standard', true, 4, 2, true, 2, 1, true, 1, 'small', 'small', 'large', undefined],
      ['deep', true, 5, 3, true, 3, 2, true, 2, 'medium', 'small', 'large', undefined],
      ['academic', true, 6, 3, true, 4, 3, true, 2, 'medium', 'small', 'large', 30000],
    ]);
  });

  it('a task naming no strategy gets standard, with citations on and fact extraction off', () => {
    const settings = settingsOf();
    assert.equal(settings.strategy, 'standard');
    assert.equal(settings.citations, true);
    assert.equal(settings.factExtraction, false);
  });

  it('explicit context keys override the preset', () => {
    const settings = settingsOf({
      research_strategy: 'quick', iterative_research_enabled: true, iterative_max_iterations: 5, max_concurrent_agents: 7,
      enable_verification: true, enable_fact_extraction: true, enable_citations: false,
    });
    assert.deepEqual(
      [settings.strategy, settings.iterative, settings.maxConcurrentAgents, settings.verification, settings.factExtraction, settings.citations],
      ['quick', { enabled: true, maxIterations: 5 }, 7, true, true, false],
    );
    assert.equal(settingsOf({ research_strategy: 'deep', enable_verification: false, iterative_research_enabled: false }).verification, false);
  });

  it('the top level overrides the context (spec 4.2 rule 3), and max_iterations sets the agents\' turns', () => {
    const settings = settingsOf({ research_strategy: 'quick', max_concurrent_agents: 2, enable_verification: false },
      { research_strategy: 'academic', max_concurrent_agents: 9, enable_verification: true, max_iterations: 6 });
    assert.deepEqual([settings.strategy, settings.maxConcurrentAgents, settings.verification, settings.reactMaxIterations], ['academic', 9, true, 6]);
  });

  it('the file\'s default strategy applies when the task names none', () => {
    const text = readFileSync('config/research-strategies.yaml', 'utf8').replace('default_strategy: standard', 'default_strategy: deep');
    assert.equal(resolveResearchSettings(parseResearchStrategies(text), request()).strategy, 'deep');
  });

  it('an invalid file is refused naming it and what is wrong', () => {
    const shipped = readFileSync('config/research-strategies.yaml', 'utf8');
    const broken = (from: string, to: string) => () => parseResearchStrategies(shipped.replace(from, to), 'config/research-strategies.yaml');
    assert.throws(broken('max_concurrent_agents: 3', 'max_concurrent_agents: 30'), /invalid research strategies file config\/research-strategies\.yaml:\n.*\/strategies\/quick\/max_concurrent_agents/);
    assert.throws(broken('  academic:', '  scholarly:'), /\/strategies/);
    assert.throws(broken('synthesis: medium', 'synthesis: huge'), /\/strategies\/quick\/model_tiers\/synthesis/);
    assert.throws(broken('default_strategy: standard', 'default_strategy: thorough'), /\/default_strategy/);
    assert.throws(() => loadResearchStrategies('config/none.yaml'), /invalid research strategies file config\/none\.yaml/);
  });
});

describe('research request validation', () => {
  it('accepts every research setting within its range, and a request without any', () => {
    assert.deepEqual(researchRequestProblems(request()), []);
    assert.deepEqual(researchRequestProblems(request(
      { force_research: true, research_strategy: 'deep', iterative_research_enabled: false, iterative_max_iterations: 5, max_concurrent_agents: 1, enable_verification: false, enable_fact_extraction: true, enable_citations: true },
      { research_strategy: 'quick', max_iterations: 50, max_concurrent_agents: 20, enable_verification: true },
    )), []);
  });

  const WRONG: Array<[ResearchRequest, string]> = [
    [request({}, { research_strategy: 'thorough' }), 'research_strategy must be one of quick, standard, deep, academic (got "thorough")'],
    [request({ research_strategy: 3 }), 'context.research_strategy must be one of quick, standard, deep, academic (got 3)'],
    [request({ iterative_max_iterations: 0 }), 'context.iterative_max_iterations must be an integer from 1 to 5 (got 0)'],
    [request({ iterative_max_iterations: 6 }), 'context.iterative_max_iterations must be an integer from 1 to 5 (got 6)'],
    [request({ iterative_max_iterations: 2.5 }), 'context.iterative_max_iterations must be an integer from 1 to 5 (got 2.5)'],
    [request({ iterative_research_enabled: 'yes' }), 'context.iterative_research_enabled must be true or false (got "yes")'],
    [request({ max_concurrent_agents: 21 }), 'context.max_concurrent_agents must be an integer from 1 to 20 (got 21)'],
    [request({}, { max_concurrent_agents: 0 }), 'max_concurrent_agents must be an integer from 1 to 20 (got 0)'],
    [request({ enable_verification: 1 }), 'context.enable_verification must be true or false (got 1)'],
    [request({}, { enable_verification: 'true' }), 'enable_verification must be true or false (got "true")'],
    [request({ enable_fact_extraction: null }), 'context.enable_fact_extraction must be true or false (got null)'],
    [request({ enable_citations: 'no' }), 'context.enable_citations must be true or false (got "no")'],
    [request({ force_research: 'true' }), 'context.force_research must be true or false (got "true")'],
    [request({}, { max_iterations: 51 }), 'max_iterations must be an integer from 1 to 50 (got 51)'],
  ];
  for (const [wrong, message] of WRONG) {
    it(`refuses: ${message}`, () => assert.deepEqual(researchRequestProblems(wrong), [message]));
  }

  it('answers 400 naming every wrong setting at once, in the spec\'s error shape', () => {
    assert.throws(() => checkResearchRequest(request({ iterative_max_iterations: 9, enable_citations: 'x' }, { max_concurrent_agents: 99 })), (error: unknown) => {
      assert.ok(error instanceof AppError);
      assert.equal(error.statusCode, 400);
      assert.equal(error.message, 'max_concurrent_agents must be an integer from 1 to 20 (got 99); '
        + 'context.iterative_max_iterations must be an integer from 1 to 5 (got 9); context.enable_citations must be true or false (got "x")');
      return true;
    });
    assert.doesNotThrow(() => checkResearchRequest(request({ research_strategy: 'academic' })));
  });
});
