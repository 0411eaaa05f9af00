import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';

/** The most subtasks a plan may have (reference §1.4: at most 8, ideally 3–5). */
export const MAX_SUBTASKS = 8;

/** Below this complexity a one-subtask, tool-less plan runs as a simple task (reference §1.3). */
export const SIMPLE_THRESHOLD = 0.3;

const SubtaskSchema = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9_.:-]+$' }),
  description: Type.String({ minLength: 1, maxLength: 4000 }),
  dependencies: Type.Optional(Type.Array(Type.String({ maxLength: 64 }), { maxItems: MAX_SUBTASKS })),
  suggested_tools: Type.Optional(Type.Array(Type.String({ maxLength: 100 }), { maxItems: 20 })),
  tool_parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});

/** What the decomposition call answers (and what `context.mock_plan` scripts). */
export const DecompositionSchema = Type.Object({
  complexity_score: Type.Number({ minimum: 0, maximum: 1 }),
  subtasks: Type.Array(SubtaskSchema, { maxItems: MAX_SUBTASKS }),
  execution_strategy: Type.Optional(Type.Enum(['parallel', 'sequential', 'hybrid'])),
  concurrency_limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
});

type Decomposition = Static<typeof DecompositionSchema>;

export interface Subtask {
  id: string;
  description: string;
  dependencies: string[];
  suggestedTools: string[];
  toolParameters: Record<string, unknown>;
}

export type ExecutionStrategy = 'parallel' | 'sequential' | 'hybrid';

export interface TaskPlan {
  complexityScore: number;
  subtasks: Subtask[];
  executionStrategy: ExecutionStrategy;
  concurrencyLimit: number | undefined;
}

/** Parses a decomposition answer; a sentence saying what is wrong when it does not fit the schema. */
export function parseDecomposition(value: unknown): TaskPlan | string {
  if (!Value.Check(DecompositionSchema, value)) {
    const first = Value.Errors(DecompositionSchema, value)[0];
    return `the plan does not fit the schema (${first?.instancePath || '/'}: ${first?.message})`;
  }
  const plan = toPlan(value);
  return planProblem(plan) ?? plan;
}

function toPlan(decomposition: Decomposition): TaskPlan {
  const subtasks = decomposition.subtasks.map((subtask) => ({
    id: subtask.id,
    description: subtask.description,
    dependencies: [...new Set(subtask.dependencies ?? [])],
    suggestedTools: subtask.suggested_tools ?? [],
    toolParameters: subtask.tool_parameters ?? {},
  }));
  const hasDependencies = subtasks.some((subtask) => subtask.dependencies.length > 0);
  return {
    complexityScore: decomposition.complexity_score,
    subtasks,
    executionStrategy: hasDependencies ? 'hybrid' : decomposition.execution_strategy === 'sequential' ? 'sequential' : 'parallel',
    concurrencyLimit: decomposition.concurrency_limit,
  };
}

/** Duplicate ids and dependencies on subtasks that do not exist make a plan unusable (a cycle is checked apart). */
function planProblem(plan: TaskPlan): string | undefined {
  if (plan.subtasks.length === 0) return 'the plan has no subtasks';
  const ids = new Set(plan.subtasks.map((subtask) => subtask.id));
  if (ids.size < plan.subtasks.length) return 'the plan repeats a subtask id';
  for (const subtask of plan.subtasks) {
    const unknown = subtask.dependencies.find((dependency) => !ids.has(dependency));
    if (unknown !== undefined) return `subtask ${subtask.id} depends on ${unknown}, which is not in the plan`;
  }
  return undefined;
}

/** The plan when decomposition fails: the whole query as one subtask, run as a simple task. */
export function singleSubtaskPlan(query: string, complexityScore = 0.1, suggestedTools: string[] = []): TaskPlan {
  return {
    complexityScore,
    subtasks: [{ id: 'task-1', description: query, dependencies: [], suggestedTools, toolParameters: {} }],
    executionStrategy: 'parallel',
    concurrencyLimit: undefined,
  };
}

/** Simple iff the score is below SIMPLE_THRESHOLD and there is one subtask that needs no tools. */
export function isSimplePlan(plan: TaskPlan): boolean {
  if (plan.complexityScore >= SIMPLE_THRESHOLD || plan.subtasks.length !== 1) return false;
  const [only] = plan.subtasks;
  return only.suggestedTools.length === 0 && Object.keys(only.toolParameters).length === 0;
}

/** The plan as the PROGRESS event announces it (reference §1.3, step 9). */
export function planPayload(plan: TaskPlan) {
  return {
    plan: plan.subtasks.map((subtask) => ({ id: subtask.id, name: subtask.description.slice(0, 200) })),
    deps: plan.subtasks.flatMap((subtask) => subtask.dependencies.map((from) => ({ from, to: subtask.id }))),
    complexity_score: plan.complexityScore,
    execution_strategy: plan.executionStrategy,
  };
}
