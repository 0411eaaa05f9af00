import type { AssistantModelMessage, ModelMessage, ToolResultPart } from 'ai';
import { retryUntilDatabaseAnswers } from '../../db/retry.ts';
import type { Deps } from '../../deps.ts';
import type { NewTaskEvent } from '../../events/append-event.ts';
import { type ModelTextResult, type ModelToolSpec, type RequestedToolCall } from '../../llm/stream-model-text.ts';
import { appendEvents, changeTask } from '../../task-state/change-task.ts';
import { toolNeedsApproval } from '../runtime/approval-need.ts';
import type { ToolDefinition } from '../../tools/registry.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';
import { gateToolCall } from '../runtime/tool-approval.ts';
import {
  AGENT_TOOL_LIMITS, atMostOnceRows, callKeyOf, invokedEvent, limitReached, refusalOf, refuseCall, runCall, skipCall, toolOf,
  type CallRecord, type ToolLoopLimits, type ToolUse,
} from './agent-tool-call.ts';
import { callModelWithinBudget, spentBudgetEvents, type ModelRequest, type Opening } from './budgeted-call.ts';
import {
  agentCallKey, agentClosing, agentCompletedEventOf, agentOpening, agentRequest, maxOutputTokensOf, openAgentEventWriter,
  type AgentCall, type AgentOutcome,
} from './call-agent.ts';
import { thresholdEvents } from './model-call.ts';
import { insertToolCallRows, type NewToolCallRow } from './tool-call-queries.ts';
import { settleTokens, settleTokensWithin, type BudgetState } from './token-budget.ts';

/** The tools an agent carries (role-tools.ts roleToolSet builds a role's). */
export interface AgentTools {
  /** The role, named when a call is refused. */
  role: string;
  /** Offered to the model and run for it: the agent's own tools, not looked up by name in the registry. */
  offered: ToolDefinition[];
  /** Names the role allows, offered or not: a call to one not offered is told it is not available (else: not allowed). */
  allowed: string[];
  /** Overrides of the non-research defaults (AGENT_TOOL_LIMITS). */
  limits?: Partial<ToolLoopLimits>;
}

const FINAL_TURN_NOTE = 'Tool use has ended for this request. Answer now from what you have, without calling tools.';

interface ToolLoop {
  call: AgentCall;
  use: ToolUse;
  offered: ModelToolSpec[];
  messages: ModelMessage[];
  /** The agent's text so far, its turns joined by a blank line, exactly as streamed. */
  said: string;
  turns: ModelTextResult[];
  /** Model turns that called tools. */
  toolTurns: number;
}

/** Writes that wait for the next commit: before the next tool runs, or at the end of the turn. */
interface PendingWrites {
  events: NewTaskEvent[];
  rows: NewToolCallRow[];
}

/**
 * An agent with tools (reference §1.8), inside the caller's durable step: the model answers or asks for tool
 * calls, which run (or are refused, or wait for an approval: runtime/tool-approval.ts) and go back to it, until
 * it answers or a limit ends the loop; then one last turn without tools asks for the answer. Commits: the
 * opening (first reservation and events) and the completion as for a single call; per executed tool call one
 * commit before it runs (TOOL_INVOKED, with the row and TOOL_OBSERVATION of the call before it); per turn with
 * tool calls one commit closing it and opening the next (the last call's row and observation, the turn's usage,
 * the next turn's reservation). Every turn is a call of callModelWithinBudget. Everything is keyed by `stepKey`,
 * so a re-run of the step records nothing twice and replays finished tool calls from their rows.
 * When a budget runs out between turns, the agent answers with what it has said so far, or, having said
 * nothing, reports the budget exhausted as a single call does.
 */
export async function runToolLoop(deps: Deps, task: TaskSnapshot, call: AgentCall, tools: AgentTools, stepKey: string, cancel: AbortSignal): Promise<AgentOutcome> {
  const loop = startLoop(deps, task, call, tools, stepKey);
  let open = agentOpening(call, stepKey);
  for (let turn = 0; ; turn++) {
    const outcome = await streamTurn(deps, task, loop, turn, open, cancel);
    if ('budgetExhausted' in outcome) return endOnSpentBudget(loop, outcome.budgetExhausted);
    if ('answer' in outcome) return outcome;
    const { result, requested, lastDelta } = outcome;
    const pending = await runRequestedCalls(deps, task, loop, result, requested, lastDelta, cancel)
      .catch((error: unknown) => settleAndRethrow(deps, task, turnCallKey(task, stepKey, turn), loop, result, error));
    open = nextTurnOpening(deps, task, loop, turn, result, pending);
  }
}

/** Cancelled or out of time while a tool ran: the turn's tokens were spent all the same. */
async function settleAndRethrow(deps: Deps, task: TaskSnapshot, callKey: string, loop: ToolLoop, result: ModelTextResult, error: unknown): Promise<never> {
  await retryUntilDatabaseAnswers(() => settleTokens(deps.db, deps.config, task, callKey, loop.call.agentId, result), { logger: deps.logger, what: 'record usage' });
  throw error;
}

function startLoop(deps: Deps, task: TaskSnapshot, call: AgentCall, tools: AgentTools, stepKey: string): ToolLoop {
  const offered = tools.offered.map(({ name, description, parameters }) => ({ name, description, parameters }));
  return {
    call, offered, messages: [...call.messages], said: '', turns: [], toolTurns: 0,
    use: {
      agentId: call.agentId, role: tools.role, stepKey, tools, limits: { ...AGENT_TOOL_LIMITS, ...tools.limits },
      executed: 0, outputChars: 0, consecutiveErrors: 0, nextIndex: 0,
    },
  };
}

/** Turn 0 is keyed as a single call is, so a turn without tool calls is that call exactly. */
const turnStepKey = (stepKey: string, turn: number) => (turn === 0 ? stepKey : `${stepKey}:t${turn}`);
const turnCallKey = (task: TaskSnapshot, stepKey: string, turn: number) => agentCallKey(task, turnStepKey(stepKey, turn));

type TurnOutcome = AgentOutcome | { result: ModelTextResult; requested: RequestedToolCall[]; lastDelta: NewTaskEvent[] };

/**
 * One model turn, opened by `open`. A turn that asks for no tool call is the agent's last: its closing commit
 * completes the agent. Otherwise its usage is settled by the next turn's opening (or settleAndRethrow).
 */
async function streamTurn(deps: Deps, task: TaskSnapshot, loop: ToolLoop, turn: number, open: Opening, cancel: AbortSignal): Promise<TurnOutcome> {
  const turnKey = turnStepKey(loop.use.stepKey, turn);
  let requested: RequestedToolCall[] = [];
  const outcome = await callModelWithinBudget<AgentAnswer>(deps, task, {
    agentId: loop.call.agentId,
    callKey: agentCallKey(task, turnKey),
    request: turnRequest(deps, task, loop),
    maxOutputTokens: maxOutputTokensOf(loop.call),
    // A turn's text follows the text of the turns before it after a blank line, in the stream as in the answer.
    stream: { events: await openAgentEventWriter(deps, task, turnKey, loop.call), stepKey: turnKey, firstDeltaPrefix: loop.said === '' ? '' : '\n\n' },
    onSpentBudget: 'report',
    open,
    settle: (result) => {
      requested = loop.use.stopped === undefined ? result.toolCalls ?? [] : [];
      addTurn(loop, result);
      return requested.length === 0 ? agentClosing(loop.use.stepKey, answerOf(loop)) : 'later';
    },
  }, cancel);
  if ('declined' in outcome) throw new Error('an agent\'s opening never declines');
  if ('budgetExhausted' in outcome) return outcome;
  if (outcome.closed) return { answer: outcome.closed };
  return { result: outcome.result, requested, lastDelta: outcome.lastDelta };
}

function turnRequest(deps: Deps, task: TaskSnapshot, loop: ToolLoop): ModelRequest {
  return {
    ...agentRequest(deps, task, loop.call),
    system: systemOf(loop),
    messages: loop.messages,
    tools: loop.offered,
    // The tools stay declared on the last turn: some providers refuse tool calls in a history without them.
    toolChoice: loop.use.stopped === undefined ? 'auto' : 'none',
  };
}

const systemOf = (loop: ToolLoop) => (loop.use.stopped === undefined ? loop.call.system : `${loop.call.system}\n\n${FINAL_TURN_NOTE}`);

function addTurn(loop: ToolLoop, result: ModelTextResult): void {
  loop.turns.push(result);
  loop.said = loop.said !== '' && result.text !== '' ? `${loop.said}\n\n${result.text}` : loop.said + result.text;
}

/** The agent's answer: its text so far, the usage of all its turns, the model (and why it stopped) of the last. */
function answerOf(loop: ToolLoop): AgentAnswer {
  const last = loop.turns.at(-1)!;
  const sum = (field: 'inputTokens' | 'outputTokens' | 'cachedInputTokens' | 'cacheWriteTokens' | 'costUsd') => loop.turns.reduce((total, turn) => total + turn[field], 0);
  return {
    agentId: loop.call.agentId, text: loop.said, model: last.model, provider: last.provider,
    inputTokens: sum('inputTokens'), outputTokens: sum('outputTokens'), cachedInputTokens: sum('cachedInputTokens'), cacheWriteTokens: sum('cacheWriteTokens'), costUsd: sum('costUsd'), attempts: last.attempts,
    ...(last.finishReason ? { finishReason: last.finishReason } : {}),
  };
}

/**
 * Runs the turn's calls in order (each refused, left unrun once a limit is reached, or run), committing
 * what is pending with each call's TOOL_INVOKED before it runs; returns what the turn's end commits.
 */
async function runRequestedCalls(
  deps: Deps, task: TaskSnapshot, loop: ToolLoop, result: ModelTextResult, requested: RequestedToolCall[], lastDelta: NewTaskEvent[], cancel: AbortSignal,
): Promise<PendingWrites> {
  const { use } = loop;
  let pending: PendingWrites = { events: lastDelta, rows: [] };
  const parts: ToolResultPart[] = [];
  for (const request of requested) {
    const key = callKeyOf(use, use.nextIndex++);
    const refusal = refusalOf(use, request.toolName);
    if (!refusal) use.stopped ??= limitReached(use);
    let record: CallRecord;
    if (refusal) record = refuseCall(deps, use, request, key, refusal);
    else if (use.stopped !== undefined) record = skipCall(request, use.stopped);
    else ({ record, pending } = await runAllowedCall(deps, task, use, request, key, pending, cancel));
    pending.events.push(...record.events);
    if (record.row) pending.rows.push(record.row);
    parts.push(record.part);
  }
  loop.toolTurns += 1;
  use.stopped ??= limitReached(use)
    ?? (loop.toolTurns >= use.limits.iterations ? `the limit of ${use.limits.iterations} model turns with tool calls is reached` : undefined);
  loop.messages.push(assistantTurn(result, requested), { role: 'tool', content: parts });
  return pending;
}

/**
 * Runs an allowed call, committing what is pending with its TOOL_INVOKED first. A call to a tool that needs
 * approval passes the gate before anything of it runs (runtime/tool-approval.ts), with the turn's earlier calls
 * committed: a park there ends the step, and its re-run replays them from their rows. Denied, it is refused.
 */
async function runAllowedCall(
  deps: Deps, task: TaskSnapshot, use: ToolUse, request: RequestedToolCall, key: string, pending: PendingWrites, cancel: AbortSignal,
): Promise<{ record: CallRecord; pending: PendingWrites }> {
  if (toolNeedsApproval(deps, request.toolName)) {
    await commitWrites(deps, task, pending, []);
    pending = { events: [], rows: [] };
    const { refusal } = await gateToolCall(deps, task, { agentId: use.agentId, tool: request.toolName, input: request.input, callKey: key });
    if (refusal) return { record: refuseCall(deps, use, request, key, refusal), pending };
  }
  const claim = await atMostOnceRows(deps, task, use, toolOf(use, request.toolName)!, request, key);
  await commitWrites(deps, task, { ...pending, rows: [...pending.rows, ...claim] }, [invokedEvent(use, request, key)]);
  return { record: await runCall(deps, task, use, request, key, cancel), pending: { events: [], rows: [] } };
}

function assistantTurn(result: ModelTextResult, requested: RequestedToolCall[]): AssistantModelMessage {
  const text = result.text === '' ? [] : [{ type: 'text' as const, text: result.text }];
  const calls = requested.map((request) => ({ type: 'tool-call' as const, toolCallId: request.toolCallId, toolName: request.toolName, input: request.input }));
  return { role: 'assistant', content: [...text, ...calls] };
}

/** Events alone go out with other tasks' appends; finished calls' rows need a transaction of their own. */
async function commitWrites(deps: Deps, task: TaskSnapshot, pending: PendingWrites, more: NewTaskEvent[]): Promise<void> {
  const events = [...pending.events, ...more];
  if (pending.rows.length === 0) {
    if (events.length === 0) return;
    await appendEvents(deps, task.id, 'workflow', events);
    return;
  }
  await changeTask(deps, task.id, 'workflow', async (transaction) => {
    await insertToolCallRows(transaction, pending.rows);
    return { events };
  });
}

/**
 * The commit between turns, as the next turn's opening: the turn's pending writes and usage, then the next turn's
 * reservation. Refused, the agent answers with what it has said, in the same commit (endOnSpentBudget).
 */
function nextTurnOpening(deps: Deps, task: TaskSnapshot, loop: ToolLoop, turn: number, result: ModelTextResult, pending: PendingWrites): Opening {
  const { call, use } = loop;
  return async (transaction, _row, reserve) => {
    await insertToolCallRows(transaction, pending.rows);
    const crossings = await settleTokensWithin(transaction, deps.config, task, turnCallKey(task, use.stepKey, turn), call.agentId, result);
    const reservation = await reserve();
    const events = [...pending.events, ...thresholdEvents(crossings)];
    if (reservation.granted) return { events, reservation };
    const spent = [...events, ...spentBudgetEvents(reservation.exhausted)];
    return { events: answersOnSpentBudget(loop, reservation.exhausted) ? [...spent, agentCompletedEventOf(use.stepKey, answerOf(loop))] : spent, reservation };
  };
}

/** A spent cost budget ends the run (run-agent.ts) even when the agent has something to say. */
const answersOnSpentBudget = (loop: ToolLoop, exhausted: BudgetState) => loop.said !== '' && exhausted.scope !== 'run';

function endOnSpentBudget(loop: ToolLoop, exhausted: BudgetState): AgentOutcome {
  return answersOnSpentBudget(loop, exhausted) ? { answer: answerOf(loop) } : { budgetExhausted: exhausted };
}
