import assert from 'node:assert/strict';
import { test } from 'node:test';
import { routeOfQuery, routeOfTask } from '../../../src/workflows/planning/query-route.ts';
import { parseTaskSettings } from '../../../src/workflows/runtime/task-settings.ts';

/**
 * The labelled routing table of issue 30 (Scope 5). `simple` queries must go direct; `multi-step` queries must be
 * planned (a direct multi-step query is a misroute and fails the test); `ambiguous` queries are planned by the rule
 * (anything not clearly simple is planned), so they are asserted planned too.
 */
type Label = 'simple' | 'multi-step' | 'ambiguous';

const TABLE: ReadonlyArray<[Label, string]> = [
  ['simple', 'What is the capital of France?'],
  ['simple', 'Who wrote Hamlet?'],
  ['simple', 'How many legs does a spider have?'],
  ['simple', 'Define photosynthesis.'],
  ['simple', 'Translate "good morning" into Spanish.'],
  ['simple', 'What year did the Berlin Wall fall?'],
  ['simple', 'Tell me a joke.'],
  ['simple', 'Write a haiku about autumn.'],
  ['simple', 'Why is the sky blue?'],
  ['simple', 'How does a refrigerator keep food cold?'],
  ['simple', 'What does HTTP stand for?'],
  ['simple', 'Hello!'],
  ['simple', 'Explain recursion to a ten-year-old.'],
  ['simple', 'What is the boiling point of water in Fahrenheit?'],
  ['simple', 'Suggest a name for a grey kitten.'],
  ['simple', 'Who painted the Mona Lisa?'],
  ['simple', 'What is a haiku?'],
  ['simple', 'Give me a synonym for happy.'],

  ['multi-step', 'Compare PostgreSQL and MySQL for a write-heavy workload.'],
  ['multi-step', 'Find the population of Tokyo, then compare it with the population of New York.'],
  ['multi-step', 'What is the GDP of Germany? How does it compare to France?'],
  ['multi-step', 'Research the history of the printing press and write a short essay about its impact.'],
  ['multi-step', 'List the steps to set up a Kubernetes cluster.'],
  ['multi-step', 'Summarize the plot of Dune. Then list its main characters.'],
  ['multi-step', 'First explain TCP, second explain UDP, finally compare them.'],
  ['multi-step', 'What are the pros and cons of remote work?'],
  ['multi-step', 'Give me the latest news about the Mars missions.'],
  ['multi-step', 'Search the web for the cheapest flights from London to Rome.'],
  ['multi-step', 'Analyze this dataset of sales and report the main trends.'],
  ['multi-step', 'Plan a three-day trip to Kyoto with a budget.'],
  ['multi-step', 'Fetch https://example.com/report.pdf and summarize it.'],
  ['multi-step', 'Write a Python script that parses a CSV file.'],
  ['multi-step', 'Design a database schema for a library system, including books, members, and loans.'],
  ['multi-step', 'What is the weather in Paris today?'],
  ['multi-step', '1. Explain inflation\n2. Explain deflation\n3. Explain stagflation'],
  ['multi-step', 'Explain the difference between a process and a thread.'],
  ['multi-step', 'Evaluate three marketing strategies for a new coffee shop and recommend one.'],
  ['multi-step', 'I am moving to Berlin next year with two children and a dog; what should I sort out before the move, in what order, and what will it roughly cost?'],
  ['multi-step', 'Calculate the compound interest on 10000 at 5% over 10 years.'],
  ['multi-step', 'What is 1234 * 5678?'],

  ['ambiguous', 'Who wrote Romeo and Juliet?'],
  ['ambiguous', 'Is a tomato a fruit or a vegetable?'],
  ['ambiguous', 'What is an electric current?'],
  ['ambiguous', 'Tell me about the causes and effects of the French Revolution.'],
  ['ambiguous', 'What is the best programming language to learn?'],
  ['ambiguous', 'How do I get better at chess? What should I practise?'],
  ['ambiguous', 'Explain quantum computing in detail.'],
  ['ambiguous', 'What happened in the world this week?'],
  ['ambiguous', 'How fast can a cheetah run, and for how long?'],
  ['ambiguous', 'Describe the water cycle: evaporation, condensation, precipitation.'],
];

test('the routing table: clearly simple queries go direct; multi-step and ambiguous queries are planned', () => {
  const counts = { simple: 0, 'multi-step': 0, ambiguous: 0 };
  const misroutes: string[] = [];
  for (const [label, query] of TABLE) {
    const routing = routeOfQuery(query);
    assert.ok(routing.reason.length > 0, `a reason for ${query}`);
    const expected = label === 'simple' ? 'direct' : 'planned';
    if (routing.decision === expected) counts[label] += 1;
    else misroutes.push(`${label} query routed ${routing.decision} (${routing.reason}): ${query}`);
  }
  assert.deepEqual(misroutes, []);
  assert.ok(TABLE.length >= 40);
  assert.deepEqual(counts, { simple: 18, 'multi-step': 22, ambiguous: 10 });
});

test('the reason names what sent a query to the planner', () => {
  assert.match(routeOfQuery('Compare Rust with Go.').reason, /comparison: "Compare"/);
  assert.match(routeOfQuery('Who is Ada? What did she build?').reason, /more than one question/);
  assert.match(routeOfQuery('word '.repeat(30)).reason, /long query \(30 words\)/);
  assert.equal(routeOfQuery('   ').decision, 'planned');
});

test('settings that need the plan or tools keep a simple query planned; a chosen role or workflow is not routed', () => {
  const settings = (context: Record<string, unknown>, options: Record<string, unknown> = {}) => parseTaskSettings(context, options);
  const query = 'What is the capital of France?';
  assert.deepEqual(routeOfTask(settings({}), query, false)?.decision, 'direct');
  assert.match(routeOfTask(settings({ require_approval: true }), query, false)!.reason, /approval/);
  assert.match(routeOfTask(settings({ mock_plan: { complexity_score: 0.1, subtasks: [] } }), query, false)!.reason, /mock_plan/);
  assert.match(routeOfTask(settings({ mock_tool_calls: [] }), query, false)!.reason, /mock_tool_calls/);
  assert.equal(routeOfTask(settings({ role: 'analysis' }), query, false), undefined);
  assert.equal(routeOfTask(settings({}), query, true), undefined);
});
