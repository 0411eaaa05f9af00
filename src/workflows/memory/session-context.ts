import type { Deps } from '../../deps.ts';
import { currentStepId } from '../../engine/engine.ts';
import { appendEvents } from '../../task-state/change-task.ts';
import type { ConversationMessage } from '../../llm/stream-model-text.ts';
import { COMPRESSOR_AGENT_ID, instructionTokens, summariseConversation, type CompressionRequest } from './context-compressor.ts';
import { endsTheTask } from '../runtime/control-errors.ts';
import { MIN_SUMMARY_TOKENS, splitHistory, tokensOf, uncoveredMessages, type HistorySplit } from './history-plan.ts';
import { estimateTokens, taskContextWindow } from '../agent-calls/model-call.ts';
import { comparePositions, loadSessionHistory, type HistoryMessage } from './session-history.ts';
import { findLatestSummary, saveSummary, type StoredSummary } from './session-summaries.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import { runTaskStep } from '../runtime/task-step.ts';
import { withCancelWatch } from '../runtime/cancel-watch.ts';

/** The history an agent receives: verbatim messages, and the summary of those left out (if any). */
export interface SessionContext {
  messages: ConversationMessage[];
  summary: string | null;
}

interface Sizes {
  contextWindow: number;
  /** System prompt and query: sent whatever happens to the history. */
  fixed: number;
  /** Above this the history is compressed (compression_trigger_ratio of the window). */
  limit: number;
  /** What compression aims for (compression_target_ratio of the window). */
  target: number;
}

/** A chunk of conversation a compressor call reads is at least this large, however big the summary is. */
const MIN_CHUNK_TOKENS = 256;

/**
 * Loads the session's history window for the task and, when it would not fit the model's window, replaces
 * its older middle by a summary (spec 2.2). A durable step of its own, so a replay reuses its outcome rather
 * than summarising again; its usage rows and events are keyed by the step for the same reason.
 */
export async function prepareSessionContext(deps: Deps, task: TaskSnapshot, system: string): Promise<SessionContext> {
  return runTaskStep(deps, 'session-context', () => shapeSessionContext(deps, task, system, `session-context#${currentStepId()}`));
}

async function shapeSessionContext(deps: Deps, task: TaskSnapshot, system: string, stepKey: string): Promise<SessionContext> {
  const plan = await planSessionContext(deps, task, system);
  return 'context' in plan ? plan.context : compressMiddle(deps, task, { ...plan.compression, stepKey });
}

export type SessionContextPlan = { context: SessionContext } | { compression: Omit<Compression, 'stepKey'> };

/** The history window as it can be sent, or what must be summarised first (reads only). */
export async function planSessionContext(deps: Deps, task: TaskSnapshot, system: string): Promise<SessionContextPlan> {
  const settings = task.settings.history;
  const window = await loadSessionHistory(deps.db, task, settings.windowSize);
  const contextWindow = taskContextWindow(deps, task);
  const sizes: Sizes = {
    contextWindow,
    fixed: estimateTokens(system, task.query),
    limit: Math.floor(contextWindow * settings.triggerRatio),
    target: Math.floor(contextWindow * settings.targetRatio),
  };
  if (sizes.fixed + tokensOf(window) <= sizes.limit) return { context: compose(window, [], [], null) };
  const split = splitHistory(window, settings, sizes.fixed, sizes.target);
  if (split.middle.length === 0) return { context: compose(window, [], [], null) };
  const stored = await findLatestSummary(deps.db, task.sessionId);
  const uncovered = uncoveredMessages(split.middle, stored?.through);
  if (stored && sizes.fixed + tokensOf([...split.primers, ...uncovered, ...split.recents]) + estimateTokens(stored.summary) <= sizes.limit) {
    return { context: compose(split.primers, uncovered, split.recents, stored.summary) };
  }
  return { compression: { split, stored, uncovered, sizes, tokensBefore: sizes.fixed + tokensOf(window) } };
}

interface Compression {
  split: HistorySplit;
  stored: StoredSummary | undefined;
  /** The middle messages the stored summary does not cover yet (all of them without one). */
  uncovered: HistoryMessage[];
  sizes: Sizes;
  stepKey: string;
  tokensBefore: number;
}

async function compressMiddle(deps: Deps, task: TaskSnapshot, compression: Compression): Promise<SessionContext> {
  const { split, stored, uncovered, sizes, stepKey } = compression;
  const verbatimTokens = sizes.fixed + tokensOf(split.primers) + tokensOf(split.recents);
  const summaryTokens = Math.min(Math.max(sizes.target - verbatimTokens, MIN_SUMMARY_TOKENS), Math.floor(sizes.contextWindow / 4));
  const attempt = await attemptSummary(deps, task, {
    earlierSummary: stored?.summary,
    messages: uncovered,
    summaryTokens,
    chunkTokens: Math.max(MIN_CHUNK_TOKENS, sizes.limit - 2 * summaryTokens - instructionTokens(summaryTokens)),
    callKey: `${task.id}:${stepKey}`,
  });
  if ('reason' in attempt) {
    await reportOmitted(deps, task, stepKey, uncovered.length, attempt.reason);
    return compose(split.primers, [], split.recents, stored?.summary ?? null);
  }
  const { summary } = attempt;
  const summarizedMessages = (stored?.summarizedMessages ?? 0) + uncovered.length;
  const middleEnd = split.middle.at(-1)!.position;
  const through = stored && comparePositions(stored.through, middleEnd) > 0 ? stored.through : middleEnd;
  await saveSummary(deps.db, { taskId: task.id, sessionId: task.sessionId }, { summary, through, summarizedMessages });
  await report(deps, task, stepKey, `Summarised ${uncovered.length} earlier messages to fit the model's context window`, {
    action: 'compressed',
    summarized_messages: summarizedMessages,
    new_messages: uncovered.length,
    primers: split.primers.length,
    recents: split.recents.length,
    context_window: sizes.contextWindow,
    estimated_tokens_before: compression.tokensBefore,
    estimated_tokens_after: verbatimTokens + estimateTokens(summary),
  });
  return compose(split.primers, [], split.recents, summary);
}

/**
 * A summary, or why there is none: a spent budget or a failed call leaves the uncovered middle out rather
 * than fail the task (the agent still answers from primers, recents and any earlier summary).
 * Cancellation and the deadline end the task as anywhere else.
 */
async function attemptSummary(deps: Deps, task: TaskSnapshot, request: CompressionRequest): Promise<{ summary: string } | { reason: string }> {
  try {
    const summary = await withCancelWatch(deps, task.id, (cancel) => summariseConversation(deps, task, request, cancel));
    return summary === undefined ? { reason: 'token budget exhausted' } : { summary };
  } catch (error) {
    if (endsTheTask(error)) throw error;
    deps.logger.warn({ task_id: task.id, err: error }, 'context compression failed');
    return { reason: error instanceof Error ? error.message : String(error) };
  }
}

function reportOmitted(deps: Deps, task: TaskSnapshot, stepKey: string, omitted: number, reason: string): Promise<void> {
  return report(deps, task, stepKey, `Left out ${omitted} earlier messages: they could not be summarised (${reason})`, {
    action: 'omitted', omitted_messages: omitted, reason,
  });
}

async function report(deps: Deps, task: TaskSnapshot, stepKey: string, message: string, payload: Record<string, unknown>): Promise<void> {
  await appendEvents(deps, task.id, 'workflow', [{ type: 'DATA_PROCESSING', agentId: COMPRESSOR_AGENT_ID, message, payload, dedupeKey: `${stepKey}:compression` }]);
}

function compose(primers: HistoryMessage[], uncovered: HistoryMessage[], recents: HistoryMessage[], summary: string | null): SessionContext {
  const messages = [...primers, ...uncovered, ...recents].map(({ role, content }) => ({ role, content }));
  return { messages, summary };
}

/** The summary goes into the system prompt, which every provider accepts wherever the history is cut. */
export function withConversationSummary(system: string, summary: string | null): string {
  if (!summary) return system;
  return `${system}\n\nSummary of the earlier conversation (between its first messages and the most recent ones):\n${summary}`;
}
