import type { MathJsInstance, MathNode } from 'mathjs';
import type { ToolDefinition } from './registry.ts';

const MAX_EXPRESSION_LENGTH = 1000;
/** Deeper nesting would exhaust the parser's stack long before it means anything. */
const MAX_NESTING = 50;

/** Node kinds of plain arithmetic; assignments, function definitions, blocks, matrices, ranges and property access are refused. */
const ALLOWED_NODES = new Set(['ConstantNode', 'OperatorNode', 'ParenthesisNode', 'SymbolNode', 'FunctionNode']);

/** Scalar functions only: nothing that builds matrices, parses text, or loops for long on a small input. */
const ALLOWED_FUNCTIONS = new Set([
  'abs', 'acos', 'acosh', 'asin', 'asinh', 'atan', 'atan2', 'atanh', 'cbrt', 'ceil', 'cos', 'cosh', 'cot', 'csc', 'cube',
  'exp', 'expm1', 'factorial', 'fix', 'floor', 'gcd', 'hypot', 'lcm', 'log', 'log10', 'log1p', 'log2', 'max', 'mean',
  'median', 'min', 'mod', 'nthRoot', 'pow', 'prod', 'round', 'sec', 'sign', 'sin', 'sinh', 'sqrt', 'square', 'std', 'sum',
  'tan', 'tanh', 'variance',
]);

/** The functions the mathjs security guide says to disable: they alter the instance or parse further input. */
const DISABLED_FUNCTIONS = [
  'import', 'createUnit', 'evaluate', 'parse', 'compile', 'simplify', 'simplifyConstant', 'simplifyCore', 'derivative',
  'rationalize', 'resolve', 'reviver', 'parser', 'chain', 'symbolicEqual', 'leafCount',
];

export const calculatorTool: ToolDefinition = {
  name: 'calculator',
  description: 'Evaluates an arithmetic expression and returns its value. Supports + - * / ^ %, parentheses, '
    + 'functions such as sqrt, sin, log, round, min, max, mean, constants pi and e, and unit conversions like "5 cm to inch".',
  parameters: {
    type: 'object',
    properties: {
      expression: { type: 'string', minLength: 1, maxLength: MAX_EXPRESSION_LENGTH, description: 'The expression, e.g. "2 * (3 + 4)"' },
    },
    required: ['expression'],
    additionalProperties: false,
  },
  category: 'math',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  execute: async (input) => evaluateExpression(String(input.expression)),
};

/** The value of an arithmetic expression: a number (15 significant digits), or text for units and complex numbers. */
export async function evaluateExpression(expression: string): Promise<number | boolean | string> {
  if (expression.length > MAX_EXPRESSION_LENGTH) throw new Error(`expression longer than ${MAX_EXPRESSION_LENGTH} characters`);
  if (nestingOf(expression) > MAX_NESTING) throw new Error(`expression nested deeper than ${MAX_NESTING} levels`);
  const math = await loadMath();
  const tree = math.parse(expression);
  tree.traverse(refuseNonArithmetic);
  return presentValue(math, tree.evaluate());
}

function nestingOf(expression: string): number {
  let depth = 0;
  let deepest = 0;
  for (const character of expression) {
    if ('([{'.includes(character)) deepest = Math.max(deepest, ++depth);
    else if (')]}'.includes(character)) depth--;
  }
  return deepest;
}

function refuseNonArithmetic(node: MathNode): void {
  if (!ALLOWED_NODES.has(node.type)) throw new Error(`not allowed in a calculation: ${describeNode(node.type)}`);
  if (node.type === 'ConstantNode' && typeof (node as MathNode & { value: unknown }).value !== 'number') {
    throw new Error('only numbers are allowed as constants');
  }
  if (node.type === 'FunctionNode') {
    const { fn } = node as MathNode & { fn: MathNode & { name?: string } };
    if (fn.type !== 'SymbolNode' || !ALLOWED_FUNCTIONS.has(fn.name ?? '')) throw new Error(`function not allowed: ${fn.name ?? fn.toString()}`);
  }
}

const describeNode = (type: string) => type.replace(/Node$/, '').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();

function presentValue(math: Calculator, value: unknown): number | boolean | string {
  if (typeof value === 'number') return Number.isFinite(value) ? Number(value.toPrecision(15)) : String(value);
  if (typeof value === 'boolean') return value;
  if (math.isUnit(value) || math.isComplex(value)) return math.format(value, { precision: 14 });
  throw new Error('the expression does not evaluate to a number');
}

type Calculator = Pick<MathJsInstance, 'parse' | 'format' | 'isUnit' | 'isComplex'>;

let calculator: Promise<Calculator> | undefined;

/** mathjs takes most of a second to load: only a process that calculates pays for it, once. */
function loadMath(): Promise<Calculator> {
  calculator ??= import('mathjs').then(({ create, all }) => {
    const math = create(all);
    const { parse, format, isUnit, isComplex } = math;
    const disabled = (name: string) => () => { throw new Error(`function ${name} is disabled`); };
    math.import(Object.fromEntries(DISABLED_FUNCTIONS.map((name) => [name, disabled(name)])), { override: true });
    return { parse, format, isUnit, isComplex };
  });
  return calculator;
}
