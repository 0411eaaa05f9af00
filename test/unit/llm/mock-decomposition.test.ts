import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mockDecomposition, type MockSubtask } from '../../../src/llm/mock-decomposition.ts';

type Plan = { subtasks: MockSubtask[]; complexity_score: number; execution_strategy: string };
const plan = (query: string) => mockDecomposition(query) as Plan;
const shape = (query: string) => plan(query).subtasks.map((subtask) => [subtask.description, subtask.dependencies]);

/** [request, the subtasks expected: description, then the ids it depends on]. */
const MULTI_STEP: [string, [string, string[]][]][] = [
  ['Compare the climate of Lisbon and Oslo, then recommend when to visit each', [
    ['Research the climate of Lisbon', []], ['Research the climate of Oslo', []], ['Recommend when to visit each', ['task-1', 'task-2']]]],
  ['Find the population of Paris and summarize its history', [['Find the population of Paris', []], ['Summarize its history', []]]],
  ['Research electric cars, then write a short blog post about them', [['Research electric cars', []], ['Write a short blog post about them', ['task-1']]]],
  ['List the planets of the solar system, explain which are gas giants, and rank them by size', [
    ['List the planets of the solar system', []], ['Explain which are gas giants', []], ['Rank them by size', []]]],
  ['Rust vs Go for web servers', [['Research Rust', []], ['Research Go', []], ['Rust vs Go for web servers', ['task-1', 'task-2']]]],
  ['Compare Python with JavaScript', [['Research Python', []], ['Research JavaScript', []], ['Compare Python with JavaScript', ['task-1', 'task-2']]]],
  ['What is the difference between TCP and UDP?', [['Research TCP', []], ['Research UDP', []], ['What is the difference between TCP and UDP?', ['task-1', 'task-2']]]],
  ['Gather the latest GDP figures for Japan; then estimate the growth for next year', [
    ['Gather the latest GDP figures for Japan', []], ['Estimate the growth for next year', ['task-1']]]],
  ['Translate this sentence into French and then into German', [['Translate this sentence into French', []], ['Into German', ['task-1']]]],
  ['Draft an outline for a talk on climate. After that, write the introduction.', [
    ['Draft an outline for a talk on climate', []], ['Write the introduction', ['task-1']]]],
  ['Search for recent papers on battery chemistry, summarize the three most cited, and then suggest a research direction', [
    ['Search for recent papers on battery chemistry', []], ['Summarize the three most cited', []], ['Suggest a research direction', ['task-1', 'task-2']]]],
  ['Explain how vaccines work. Then describe the history of the polio vaccine. Finally list open questions.', [
    ['Explain how vaccines work', []], ['Describe the history of the polio vaccine', ['task-1']], ['List open questions', ['task-2']]]],
  ['Compare the cost of living in Berlin and Madrid', [
    ['Research the cost of living in Berlin', []], ['Research the cost of living in Madrid', []], ['Compare the cost of living in Berlin and Madrid', ['task-1', 'task-2']]]],
  ['Check the weather in Rome, and suggest what to pack', [['Check the weather in Rome', []], ['Suggest what to pack', []]]],
  ['Calculate the monthly payment on a 200000 loan at 4%, then explain how amortization works', [
    ['Calculate the monthly payment on a 200000 loan at 4%', []], ['Explain how amortization works', ['task-1']]]],
  ['Identify the main competitors of Airbnb and evaluate their pricing', [['Identify the main competitors of Airbnb', []], ['Evaluate their pricing', []]]],
  ['Write a haiku about autumn.\nTranslate it into Japanese.', [['Write a haiku about autumn', []], ['Translate it into Japanese', []]]],
];

const SINGLE_STEP = ['What is the capital of France?', 'Tell me a joke about cats and dogs', 'Say hello', 'Explain the rise and fall of Rome'];

test(`${MULTI_STEP.length} multi-step requests split into two or more subtasks with sensible dependencies`, () => {
  assert.ok(MULTI_STEP.length >= 15);
  for (const [query, expected] of MULTI_STEP) {
    assert.deepEqual(shape(query), expected, query);
    assert.ok(plan(query).subtasks.length >= 2, query);
    assert.ok(plan(query).complexity_score >= 0.5, `${query}: above the simple threshold`);
  }
});

test('a single request stays one subtask ("and" between nouns is not two actions)', () => {
  for (const query of SINGLE_STEP) {
    assert.equal(plan(query).subtasks.length, 1, query);
    assert.equal(plan(query).complexity_score, 0.2);
  }
});

test('dependencies make the strategy hybrid; independent parts run in parallel', () => {
  assert.equal(plan('Research electric cars, then write a short blog post about them').execution_strategy, 'hybrid');
  assert.equal(plan('Find the population of Paris and summarize its history').execution_strategy, 'parallel');
});

test('at most eight subtasks, never depending on one left out', () => {
  const long = Array.from({ length: 12 }, (_, index) => `Step ${index + 1} is here.`).join(' Then ');
  const subtasks = plan(long).subtasks;
  assert.equal(subtasks.length, 8);
  assert.ok(subtasks.every((subtask) => subtask.dependencies.every((id) => subtasks.some((other) => other.id === id))));
});
