import { isDeepStrictEqual } from 'node:util';
import type { JSONValue } from '@ai-sdk/provider';
import type { ToolResultPart } from 'ai';
import type { Db } from '../../db/database.ts';
import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import type { RequestedToolCall } from '../../llm/stream-model-text.ts';
import { inToolSpan } from '../../observability/spans.ts';
import { storableJson } from '../../db/storable-text.ts';
import { invokeTool } from '../../tools/create-registry.ts';
import { toolSettingsOf, type ToolContext, type ToolDefinition, type ToolOutcome } from '../../tools/registry.ts';
import { countRefusedToolCall } from '../../tools/tool-metrics.ts';
import { withDeadline } from '../runtime/deadline.ts';
import { insertToolCallRows, loadRecordedCalls, type NewToolCallRow, type ToolCallRow } from './tool-call-queries.ts';
import type { AgentTools } from './tool-loop.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';

/** Per agent (reference §1.8, non-research defaults); research agents will pass larger ones. */
export interface ToolLoopLimits {
  /** Model turns that call tools. */
  iterations: number;
  /** Tool calls run (refused ones do not count). */
  toolCalls: number;
  /** Characters of tool output handed to the model. */
  outputChars: number;
  /** Failed calls in a row that end the loop. */
  consecutiveErrors: number;
}

export const AGENT_TOOL_LIMITS: ToolLoopLimits = { iterations: 3, toolCalls: 5, outputChars: 60_000, consecutiveErrors: 2 };

/** Characters of a tool's output kept in its TOOL_OBSERVATION event. */
const OBSERVED_OUTPUT_CHARS = 2000;

/** One agent's use of tools so far: what decides whether its next call may run. */
export interface ToolUse {
  agentId: string;
  role: string;
  stepKey: string;
  /** The tools the agent carries. */
  tools: AgentTools;
  limits: ToolLoopLimits;
  executed: number;
  outputChars: number;
  consecutiveErrors: number;
  /** Index of the next call in the agent's loop: its key is `<stepKey>:c<index>`. */
  nextIndex: number;
  /** Why the loop stops asking for tools (a limit reached), once it does. */
  stopped?: string;
  /** Calls a previous run of this step finished (loaded at the first call). */
  recorded?: Map<string, ToolCallRow>;
}

/** What one requested call leaves: the result the model reads, its events, and the row of a call that ran. */
export interface CallRecord {
  part: ToolResultPart;
  events: NewTaskEvent[];
  row?: NewToolCallRow;
}

export const callKeyOf = (use: ToolUse, index: number) => `${use.stepKey}:c${index}`;

/** The tool of that name among those the agent carries. */
export const toolOf = (use: ToolUse, toolName: string): ToolDefinition | undefined => use.tools.offered.find((tool) => tool.name === toolName);

/**
 * Why the call may not run at all (a tool the agent does not carry: not allowed for its role, or allowed but not
 * available to the task's tenant here), told to the model as its result.
 */
export function refusalOf(use: ToolUse, toolName: string): string | undefined {
  if (toolOf(use, toolName)) return undefined;
  return use.tools.allowed.includes(toolName) ? `tool ${toolName} is not available` : `tool ${toolName} is not allowed for role ${use.role}`;
}

/** The limit that forbids running another call, if one does; it then ends the loop. */
export function limitReached(use: ToolUse): string | undefined {
  const { limits } = use;
  if (use.consecutiveErrors >= limits.consecutiveErrors) return `${limits.consecutiveErrors} tool calls failed in a row`;
  if (use.executed >= limits.toolCalls) return `the limit of ${limits.toolCalls} tool calls is reached`;
  if (use.outputChars >= limits.outputChars) return `the limit of ${limits.outputChars} characters of tool output is reached`;
  return undefined;
}

export function refuseCall(deps: Deps, use: ToolUse, request: RequestedToolCall, key: string, refusal: string): CallRecord {
  countRefusedToolCall(deps.tools, request.toolName);
  return {
    part: resultPart(request, { type: 'error-text', value: refusal }),
    events: [observationEvent(use, request, key, { error: refusal, refused: true, duration_ms: 0, cost_usd: 0 })],
  };
}

/** A call left unrun because the loop has stopped: the model is told why, nothing is recorded. */
export function skipCall(request: RequestedToolCall, reason: string): CallRecord {
  return { part: resultPart(request, { type: 'error-text', value: `not run: ${reason}` }), events: [] };
}

export function invokedEvent(use: ToolUse, request: RequestedToolCall, key: string): NewTaskEvent {
  return {
    type: 'TOOL_INVOKED', agentId: use.agentId, message: `Calling tool ${request.toolName}`,
    payload: { tool: request.toolName, call_id: request.toolCallId, args: request.input }, dedupeKey: `${key}:invoked`,
  };
}

/**
 * Runs an allowed call (or, on a re-run of the step, returns what the earlier run recorded for the same key,
 * tool and input) and counts it against the limits. The tool's signal aborts on cancel and at the deadline.
 */
export async function runCall(deps: Deps, task: TaskSnapshot, use: ToolUse, request: RequestedToolCall, key: string, cancel: AbortSignal): Promise<CallRecord> {
  const tool = toolOf(use, request.toolName)!;
  const started = performance.now();
  const costOf = (outcome: ToolOutcome) => (outcome.error === undefined ? tool.costPerUseUsd : 0);
  const rowOf = (outcome: ToolOutcome) => callRow(task, request, key, outcome, costOf(outcome), Math.round(performance.now() - started));
  // A tool that changes our database records its call in the transaction of its change (ToolContext.recordCall).
  const recordCall = (transaction: Db, output: unknown) => insertToolCallRows(transaction, [rowOf({ output: storableJson(output) })]);
  const outcome = await recordedOutcome(deps.db, task, use, request, key) ?? await runTool(deps, task, tool, request, cancel, recordCall);
  const row = rowOf(outcome);
  use.executed += 1;
  use.consecutiveErrors = outcome.error === undefined ? 0 : use.consecutiveErrors + 1;
  const observed = outcome.error === undefined ? { output: observedOutput(outcome.output) } : { error: outcome.error };
  return {
    part: resultPart(request, outcome.error === undefined ? countOutput(use, outcome.output) : { type: 'error-text', value: outcome.error }),
    events: [observationEvent(use, request, key, { ...observed, duration_ms: row.duration_ms, cost_usd: row.cost_usd })],
    row,
  };
}

function callRow(task: TaskSnapshot, request: RequestedToolCall, key: string, outcome: ToolOutcome, costUsd: number, durationMs: number): NewToolCallRow {
  return {
    task_id: task.id, call_key: key, tool: request.toolName, input: JSON.stringify(request.input ?? null),
    output: outcome.error === undefined ? JSON.stringify(outcome.output) : null, error: outcome.error ?? null,
    cost_usd: costUsd, duration_ms: durationMs,
  };
}

/** What a call that acts outside our database is recorded as while it runs, and so what a re-run after a crash answers. */
export const OUTCOME_UNKNOWN = 'outcome unknown: the worker running this call stopped before it recorded what the call did, '
  + 'and a call that acts outside the gateway is not run a second time. Check whether it took effect before calling it again.';

/**
 * The row that makes a call of a tool with `external` effects run at most once: committed before the call starts,
 * it says the outcome is unknown until the call's own row replaces it, so a re-run replays that instead of
 * running the call again. None for other tools.
 */
export async function atMostOnceRows(deps: Deps, task: TaskSnapshot, use: RecordedCalls, tool: ToolDefinition, request: RequestedToolCall, key: string): Promise<NewToolCallRow[]> {
  if (tool.effects !== 'external') return [];
  // Read before the claim is written, so that this run does not take its own claim for an earlier run's.
  if (await recordedOutcome(deps.db, task, use, request, key)) return [];
  return [callRow(task, request, key, { error: OUTCOME_UNKNOWN }, 0, 0)];
}

/** The call runs as a span of the agent's; a call replayed from its row makes none. */
function runTool(deps: Deps, task: TaskSnapshot, tool: ToolDefinition, request: RequestedToolCall, cancel: AbortSignal, recordCall: ToolContext['recordCall']): Promise<ToolOutcome> {
  const attributes = { 'gen_ai.tool.call.id': request.toolCallId, 'agentgate.task.id': task.id };
  return inToolSpan(request.toolName, { attributes }, () => withDeadline(deps.config, task, cancel, (signal) => invokeTool(tool, request.input, {
    taskId: task.id, sessionId: task.sessionId, tenantId: task.tenantId, userId: task.userId, signal, db: deps.db, settings: toolSettingsOf(deps.config), recordCall,
  })));
}

/** Where a step's earlier calls are looked up: its key, and their rows once loaded. */
type RecordedCalls = Pick<ToolUse, 'stepKey' | 'recorded'>;

/**
 * A call made outside an agent's loop (a template's tool node), with the loop's guarantees: a re-run of its step
 * replays what the first run recorded, a tool that changes our database records the call with its change, and one
 * that acts outside the gateway runs at most once. It is its step's one call: `<stepKey>:c0`.
 */
export async function callToolOnce(deps: Deps, task: TaskSnapshot, stepKey: string, tool: ToolDefinition, input: unknown, cancel: AbortSignal): Promise<ToolOutcome> {
  const calls: RecordedCalls = { stepKey };
  const key = `${stepKey}:c0`;
  const request = { toolCallId: key, toolName: tool.name, input } as RequestedToolCall;
  const replayed = await recordedOutcome(deps.db, task, calls, request, key);
  if (replayed) return replayed;
  const started = performance.now();
  const rowOf = (outcome: ToolOutcome) => callRow(task, request, key, outcome,
    outcome.error === undefined ? tool.costPerUseUsd : 0, Math.round(performance.now() - started));
  await insertToolCallRows(deps.db, await atMostOnceRows(deps, task, calls, tool, request, key));
  const outcome = await runTool(deps, task, tool, request, cancel, (transaction, output) => insertToolCallRows(transaction, [rowOf({ output: storableJson(output) })]));
  await insertToolCallRows(deps.db, [rowOf(outcome)]);
  return outcome;
}

async function recordedOutcome(db: Db, task: TaskSnapshot, use: RecordedCalls, request: RequestedToolCall, key: string): Promise<ToolOutcome | undefined> {
  use.recorded ??= await loadRecordedCalls(db, task.id, use.stepKey);
  const row = use.recorded.get(key);
  if (!row || row.tool !== request.toolName || !isDeepStrictEqual(row.input, request.input ?? null)) return undefined;
  return row.error === null ? { output: row.output } : { error: row.error };
}

/** Counts the output against the agent's allowance; returns it as the model reads it, cut to what was left. */
function countOutput(use: ToolUse, output: unknown): ToolResultPart['output'] {
  const text = textOf(output);
  const room = use.limits.outputChars - use.outputChars;
  use.outputChars += Math.min(text.length, room);
  if (text.length <= room) return { type: 'json', value: (output ?? null) as JSONValue };
  return { type: 'text', value: `${text.slice(0, room)} … [cut: the tool output limit is reached]` };
}

function observedOutput(output: unknown): unknown {
  const text = textOf(output);
  return text.length <= OBSERVED_OUTPUT_CHARS ? output : `${text.slice(0, OBSERVED_OUTPUT_CHARS)}…`;
}

const textOf = (output: unknown) => (typeof output === 'string' ? output : JSON.stringify(output) ?? 'null');

function resultPart(request: RequestedToolCall, output: ToolResultPart['output']): ToolResultPart {
  return { type: 'tool-result', toolCallId: request.toolCallId, toolName: request.toolName, output };
}

function observationEvent(use: ToolUse, request: RequestedToolCall, key: string, observed: Record<string, unknown>): NewTaskEvent {
  const outcome = observed.refused ? `refused: ${String(observed.error)}` : observed.error !== undefined ? `failed: ${String(observed.error)}` : 'returned';
  return {
    type: 'TOOL_OBSERVATION', agentId: use.agentId, message: `Tool ${request.toolName} ${outcome}`.slice(0, 500),
    payload: { tool: request.toolName, call_id: request.toolCallId, ...observed }, dedupeKey: `${key}:observed`,
  };
}
