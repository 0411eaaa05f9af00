import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BUILT_IN_TOOLS, createBuiltInToolRegistry } from '../../../src/tools/built-ins.ts';
import { calculatorTool, evaluateExpression } from '../../../src/tools/calculator.ts';
import { offlineToolContext } from '../../helpers/tool-context.ts';

const context = offlineToolContext();

test('arithmetic, functions, constants and units evaluate', async () => {
  assert.equal(await evaluateExpression('2*(3+4)'), 14);
  assert.equal(await evaluateExpression('0.1 + 0.2'), 0.3);
  assert.equal(await evaluateExpression('sqrt(16) + 2^10 - 10 mod 3'), 1027);
  assert.equal(await evaluateExpression('round(sin(pi / 2) * e, 3)'), 2.718);
  assert.equal(await evaluateExpression('max(1, 5, 3) + mean(2, 4) + 5!'), 128);
  assert.equal(await evaluateExpression('2 > 1'), true);
  assert.equal(await evaluateExpression('5 cm to mm'), '50 mm');
  assert.equal(await evaluateExpression('sqrt(-4)'), '2i');
  assert.equal(await evaluateExpression('1 / 0'), 'Infinity');
});

test('assignments, function definitions and the functions that parse or alter mathjs are refused', async () => {
  const refusals: Array<[string, RegExp]> = [
    ['x = 3', /not allowed in a calculation: assignment/],
    ['f(x) = x^2', /not allowed in a calculation: function assignment/],
    ['1; 2', /not allowed in a calculation: block/],
    ['import({pi: 3}, {override: true})', /function not allowed: import/],
    ['createUnit("foo")', /function not allowed: createUnit/],
    ['evaluate("1+1")', /function not allowed: evaluate/],
    ['parse("1+1")', /function not allowed: parse/],
    ['simplify("x+x")', /function not allowed: simplify/],
    ['derivative("x^2", "x")', /function not allowed: derivative/],
    ['[1, 2, 3]', /not allowed in a calculation: array/],
    ['1:1e9', /not allowed in a calculation: range/],
    ['zeros(100000, 100000)', /function not allowed: zeros/],
    ['"text"', /only numbers are allowed as constants/],
    ['cos.constructor("return process")', /function not allowed: constructor/],
    ['cos["constructor"]', /not allowed in a calculation: accessor/],
    ['sqrt', /does not evaluate to a number/],
  ];
  for (const [expression, expected] of refusals) {
    await assert.rejects(evaluateExpression(expression), expected, expression);
  }
});

test('hostile sizes are refused before evaluation', async () => {
  await assert.rejects(evaluateExpression('1+'.repeat(600) + '1'), /longer than 1000 characters/);
  await assert.rejects(evaluateExpression('('.repeat(100) + '1' + ')'.repeat(100)), /nested deeper than 50 levels/);
  assert.equal(await evaluateExpression('-'.repeat(999) + '1'), -1);
  assert.equal(await evaluateExpression('factorial(1e6)'), 'Infinity');
});

test('the calculator is a built-in math tool, free and not dangerous; a bad expression is a tool error', async () => {
  assert.ok(BUILT_IN_TOOLS.includes(calculatorTool));
  assert.deepEqual([calculatorTool.category, calculatorTool.costPerUseUsd, calculatorTool.dangerous], ['math', 0, false]);
  const registry = createBuiltInToolRegistry();
  assert.deepEqual(await registry.invoke('calculator', { expression: '6 * 7' }, context), { output: 42 });
  assert.match((await registry.invoke('calculator', { expression: '2 +' }, context)).error!, /Unexpected end of expression/);
  assert.match((await registry.invoke('calculator', { expression: 42 }, context)).error!, /input\/expression must be string/);
});
