import type pg from 'pg';

/**
 * One finished research task, read back from the gateway's database: its durable steps (the engine's record, with
 * start and end times and the transaction id that recorded each), the model and tool calls made inside each step
 * (their keys name the step: `…#<step>`), and from those its phases, the model and tool waits on its critical
 * path, and the write transactions of each phase.
 */
export interface TaskTimeline {
  wallMs: number;
  modelCalls: number;
  toolCalls: number;
  /** Model and tool waits on the critical path: per phase, the longest chain among steps that ran side by side. */
  criticalWaitMs: number;
  /** The time the gateway adds: wall time minus the critical waits. */
  gatewayMs: number;
  gateway: GatewayTime;
  writeTransactions: number;
  phases: Phase[];
}

/** Where the gateway's time goes: the three add up to gatewayMs. */
export interface GatewayTime {
  /** In the steps that read pause and cancel between phases (`checkpoint:*`). */
  checkpointsMs: number;
  /** In the other steps, beyond their model and tool waits (the waits of side-by-side steps counted once, the longest). */
  inStepsMs: number;
  /** Between steps: workflow code, and the engine starting and recording each step. */
  betweenStepsMs: number;
}

export interface Phase {
  name: string;
  wallMs: number;
  modelCalls: number;
  toolCalls: number;
  criticalWaitMs: number;
  gatewayMs: number;
  gateway: GatewayTime;
  writeTransactions: number;
}

interface Step {
  id: number;
  name: string;
  startMs: number;
  endMs: number;
  /** The transaction that recorded the step (xmin of its row): transaction ids grow in the order they are taken. */
  xid: bigint;
  modelCalls: number;
  toolCalls: number;
  toolMs: number;
}

export interface TimelineInput {
  taskId: string;
  /** How long the mock waits before each answer (MOCK_LATENCY_MS): a model call's share of the wait. */
  modelLatencyMs: number;
  /** The next transaction id before the task was submitted, and once its workflow had finished. */
  xidBefore: bigint;
  xidAfter: bigint;
}

const CHECKPOINT = /^checkpoint:pre_(.+)$/;
const ANY_CHECKPOINT = /^checkpoint:/;

export async function readTaskTimeline(pool: pg.Pool, input: TimelineInput): Promise<TaskTimeline> {
  const steps = await readSteps(pool, input);
  const { rows: [task] } = await pool.query<{ created_ms: string }>(
    'select extract(epoch from created_at) * 1000 as created_ms from tasks where id = $1', [input.taskId]);
  const completion = steps.find((step) => step.name === 'complete-task');
  if (!completion) throw new Error(`task ${input.taskId} has no complete-task step: it did not complete`);
  const phases = splitIntoPhases(steps, Number(task.created_ms), completion.endMs, input);
  const sum = (pick: (phase: Phase) => number) => phases.reduce((total, phase) => total + pick(phase), 0);
  return {
    wallMs: completion.endMs - Number(task.created_ms),
    modelCalls: sum((phase) => phase.modelCalls),
    toolCalls: sum((phase) => phase.toolCalls),
    criticalWaitMs: sum((phase) => phase.criticalWaitMs),
    gatewayMs: sum((phase) => phase.gatewayMs),
    gateway: {
      checkpointsMs: sum((phase) => phase.gateway.checkpointsMs),
      inStepsMs: sum((phase) => phase.gateway.inStepsMs),
      betweenStepsMs: sum((phase) => phase.gateway.betweenStepsMs),
    },
    writeTransactions: sum((phase) => phase.writeTransactions),
    phases,
  };
}

async function readSteps(pool: pg.Pool, input: TimelineInput): Promise<Step[]> {
  const { rows: steps } = await pool.query<{ function_id: number; function_name: string; started: string; completed: string; xid: string }>(`
    select function_id, function_name, started_at_epoch_ms as started, completed_at_epoch_ms as completed, xmin::text as xid
    from dbos.operation_outputs where workflow_uuid = $1 order by function_id`, [input.taskId]);
  const { rows: models } = await pool.query<{ call_key: string }>('select call_key from usage_records where task_id = $1', [input.taskId]);
  const { rows: tools } = await pool.query<{ call_key: string; duration_ms: number }>('select call_key, duration_ms from tool_calls where task_id = $1', [input.taskId]);
  return steps.map((row) => {
    const inStep = <T extends { call_key: string }>(calls: T[]) => calls.filter((call) => stepOf(call.call_key) === row.function_id);
    const stepTools = inStep(tools);
    return {
      id: row.function_id, name: row.function_name, startMs: Number(row.started), endMs: Number(row.completed), xid: BigInt(row.xid),
      modelCalls: inStep(models).length, toolCalls: stepTools.length, toolMs: stepTools.reduce((total, call) => total + call.duration_ms, 0),
    };
  });
}

/** The step a call key names: `<…>#<step id>` or `<…>#<step id>:<turn>`. */
function stepOf(callKey: string): number | undefined {
  const match = /#(\d+)(?::|$)/.exec(callKey);
  return match ? Number(match[1]) : undefined;
}

/**
 * Phases run from one checkpoint to the next (`checkpoint:pre_<phase>`; the first, `start`, from the submission; the
 * last ends with the completion's record). Write transactions are those whose ids were taken in the phase: from its
 * checkpoint's record to the next one's (from before the submission, and to after the workflow ended, for the ends).
 */
function splitIntoPhases(steps: Step[], createdMs: number, endMs: number, input: TimelineInput): Phase[] {
  const starts = steps.flatMap((step) => {
    const name = CHECKPOINT.exec(step.name)?.[1];
    return name === undefined ? [] : [{ name, startMs: step.startMs, xid: step.xid }];
  }).filter((start, index, all) => index === 0 || all[index - 1].name !== start.name);
  const bounds = [{ name: 'start', startMs: createdMs, xid: input.xidBefore }, ...starts];
  return bounds.map((bound, index) => {
    const next = bounds[index + 1];
    const until = next?.startMs ?? endMs;
    const phaseSteps = steps.filter((step) => step.startMs >= bound.startMs && step.startMs < until);
    const wallMs = until - bound.startMs;
    const groups = sideBySide(phaseSteps, input.modelLatencyMs);
    const criticalWaitMs = sumOf(groups, (group) => group.longestWaitMs);
    const checkpointsMs = sumOf(groups.filter((group) => group.isCheckpoint), (group) => group.endMs - group.startMs);
    const inStepsMs = sumOf(groups.filter((group) => !group.isCheckpoint), (group) => group.endMs - group.startMs - group.longestWaitMs);
    return {
      name: bound.name, wallMs, criticalWaitMs, gatewayMs: wallMs - criticalWaitMs,
      gateway: { checkpointsMs, inStepsMs, betweenStepsMs: wallMs - criticalWaitMs - checkpointsMs - inStepsMs },
      modelCalls: phaseSteps.reduce((total, step) => total + step.modelCalls, 0),
      toolCalls: phaseSteps.reduce((total, step) => total + step.toolCalls, 0),
      writeTransactions: Number((next?.xid ?? input.xidAfter) - bound.xid),
    };
  });
}

interface StepGroup {
  startMs: number;
  endMs: number;
  /** The model and tool waits of the group's step with the most. */
  longestWaitMs: number;
  isCheckpoint: boolean;
}

/**
 * The phase's steps, those whose times overlap (research agents running side by side) grouped: on the critical
 * path, a group's model and tool waits are those of its step with the most, and groups one after another add up.
 * A step's waits are its model calls times the mock's latency plus its tool calls' own durations (an agent's calls
 * are sequential). Whatever else the phase's wall time holds is the gateway's.
 */
function sideBySide(steps: Step[], modelLatencyMs: number): StepGroup[] {
  const waitOf = (step: Step) => step.modelCalls * modelLatencyMs + step.toolMs;
  const groups: StepGroup[] = [];
  for (const step of [...steps].sort((left, right) => left.startMs - right.startMs)) {
    const last = groups.at(-1);
    if (last && step.startMs < last.endMs) {
      last.endMs = Math.max(last.endMs, step.endMs);
      last.longestWaitMs = Math.max(last.longestWaitMs, waitOf(step));
      continue;
    }
    groups.push({ startMs: step.startMs, endMs: step.endMs, longestWaitMs: waitOf(step), isCheckpoint: ANY_CHECKPOINT.test(step.name) });
  }
  return groups;
}

const sumOf = <T>(items: T[], pick: (item: T) => number) => items.reduce((total, item) => total + pick(item), 0);
