import { setTimeout as sleep } from 'node:timers/promises';
import type { JSONSchema7 } from '@ai-sdk/provider';
import pRetry from 'p-retry';
import { jsonSchema, streamText, tool, type FinishReason, type LanguageModelUsage, type ModelMessage, type OutputInterface, type ToolSet } from 'ai';
import { storableDeltas, storableJson } from '../db/storable-text.ts';
import { isTracedHere } from '../observability/spans.ts';
import { toAbortError } from './abort-error.ts';
import { costUsd } from './cost.ts';
import { countModelRequest } from './model-metrics.ts';
import { markStablePrefix } from './prompt-cache.ts';
import { classifyProviderError, ProviderCallError, streamErrorOf } from './provider-errors.ts';
import { watchForStall } from './stall-watch.ts';
import { CapacityWaitError } from './capacity-queue.ts';
import type { CapacityWaiter, ProviderTraffic } from './provider-traffic.ts';
import type { ModelCandidate, ModelRegistry } from './provider-registry.ts';
import type { ModelSelection } from './select-models.ts';

export type ConversationMessage = { role: 'user' | 'assistant'; content: string };

/** A tool offered to the model: the model may ask for it, the caller runs it (the SDK never does). */
export type ModelToolSpec = { name: string; description: string; parameters: JSONSchema7 };

/** A call the model asked for. `input` is as the model sent it: checking it is the caller's job. */
export type RequestedToolCall = { toolCallId: string; toolName: string; input: unknown };

/** How the model may use the tools offered: the AI SDK's choices (a named tool is `{type: 'tool', toolName}`). */
export type ModelToolChoice = 'auto' | 'none' | 'required' | { type: 'tool'; toolName: string };

/** A JSON answer (structured output); without a schema, any JSON object (OpenAI's `json_object`). */
export type JsonAnswerFormat = { schema?: JSONSchema7; name?: string; description?: string };

/** Sampling settings a client may set for its calls (the OpenAI layer's), forwarded to providers that take them. */
export type ModelCallSettings = {
  temperature?: number;
  topP?: number;
  stopSequences?: string[];
  frequencyPenalty?: number;
  presencePenalty?: number;
  seed?: number;
};

export type StreamModelTextRequest = {
  /** Ask for a JSON answer of this schema (structured output); the text streamed is that JSON. */
  responseSchema?: JSONSchema7;
  /** The same with a name and description, or without a schema; `responseSchema` wins when both are set. */
  jsonAnswer?: JsonAnswerFormat;
  callSettings?: ModelCallSettings;
  selection: ModelSelection;
  system?: string;
  /** Plain turns, or AI SDK messages with tool calls and tool results. */
  messages: ModelMessage[];
  tools?: ModelToolSpec[];
  /** `none` keeps the tools declared (their calls are in the history) but asks for text only. */
  toolChoice?: ModelToolChoice;
  maxOutputTokens?: number;
  abortSignal?: AbortSignal;
  /** Only the mock provider reads these: how long its whole answer takes to stream, and extra words. */
  mockDelayMs?: number;
  mockAnswerWords?: number;
  /** Further options for the mock provider only (the phase a call serves, scripted plans and failures). */
  mockOptions?: Record<string, unknown>;
  onDelta?: (text: string) => void;
  /** The tenant whose share of each deployment's limits the call counts against. */
  tenantId?: string;
  /**
   * Set for a task's call inside a step: a wait for capacity longer than PROVIDER_PARK_AFTER_SECONDS throws
   * CapacityWaitError (its task parks: workflows/runtime/capacity-wait.ts) instead of waiting in place.
   */
  capacityWaiter?: CapacityWaiter;
  /** Awaited before the next candidate is tried, after one failed without delivering text. */
  onFallback?: (fallback: ModelFallback) => Promise<void>;
  /** Names the call in its trace spans: the phase it serves (`functionId`) and ids such as the task's. */
  telemetry?: { functionId: string; metadata: Record<string, string> };
};

export type ModelFallback = {
  /** 1 for the first candidate. */
  attempt: number;
  failed: { provider: string; model: string };
  next: { provider: string; model: string };
  error: string;
};

export type ModelTextResult = {
  text: string;
  /** Catalog name of the model that answered. */
  model: string;
  provider: string;
  inputTokens: number;
  outputTokens: number;
  /** Of the input tokens, those read from the provider's prompt cache (priced at the cached-input price). */
  cachedInputTokens: number;
  /** Of the input tokens, those written to the provider's prompt cache (priced at the cache-write price). */
  cacheWriteTokens: number;
  costUsd: number;
  /** Candidates tried, this one included (1 when the first answered). */
  attempts: number;
  /** Present when the request offered tools: the calls the model asked for, in order. */
  toolCalls?: RequestedToolCall[];
  /**
   * Why the model stopped: `length` when it reached the output limit, so the text is cut short. Absent where no
   * model answered, and in answers recorded before it was kept.
   */
  finishReason?: FinishReason;
};

/**
 * Streams one answer. Candidates are tried in the order the traffic gives them (deployments in cooldown last, peers
 * of one priority by headroom). Each call first takes capacity under its deployment's shared limits; a transient
 * failure (429, overload, 5xx, a dropped stream) is retried on the same deployment after the provider's Retry-After
 * or a backoff, until its retries run out or it goes into cooldown, and then the next candidate is tried. A request
 * the provider refuses (400, content policy) is not retried anywhere; one too long for the context window is sent
 * again once with the oldest history dropped. A stream restarted after text went out must repeat that text: only
 * what follows it is delivered, so the caller's deltas still join to the answer.
 */
export async function streamModelText(
  registry: ModelRegistry,
  request: StreamModelTextRequest,
): Promise<ModelTextResult> {
  const failures: string[] = [];
  /** The candidates that failed for a passing reason (overloaded, 5xx, timed out): the call may succeed later. */
  const failedForNow: string[] = [];
  const candidates = await registry.traffic.order(registry.resolveCandidates(request.selection));
  const delivered = { text: '' };
  let messages = request.messages;
  let trimmed = false;
  for (let index = 0; index < candidates.length; index += 1) {
    const candidate = candidates[index];
    try {
      const isLast = index === candidates.length - 1;
      const answer = await callWithRetries(registry.traffic, candidate, { ...request, messages }, delivered, isLast);
      return { ...answer, attempts: failures.length + 1 };
    } catch (error) {
      if (request.abortSignal?.aborted || error instanceof CapacityWaitError) throw error;
      const failure = error instanceof StreamDivergedError ? { kind: 'request' as const, reason: error.message } : classifyProviderError(error);
      const named = `${candidate.catalogModel.provider}/${candidate.catalogModel.name}: ${failure.reason}: ${errorMessage(error)}`;
      if (failure.kind === 'context_length' && !trimmed && delivered.text === '') {
        const shorter = trimOldestHistory(messages);
        if (shorter !== undefined) {
          messages = shorter;
          trimmed = true;
          index -= 1;
          continue;
        }
      }
      if (failure.kind === 'context_length') {
        throw new ProviderCallError(`model call failed (${named}${trimmed ? '; still too long after the oldest history was dropped' : ''})`, failure.kind, { cause: error });
      }
      if (failure.kind === 'request') throw new ProviderCallError(`model call failed (${named})`, failure.kind, { cause: error });
      if (delivered.text !== '') throw new ProviderCallError(`model call failed mid-answer (${named})`, failure.kind, { cause: error });
      failures.push(named);
      if (failure.kind === 'transient') failedForNow.push(candidate.catalogModel.provider);
      const next = candidates[index + 1];
      if (next !== undefined) {
        await request.onFallback?.({
          attempt: failures.length, failed: modelName(candidate), next: modelName(next), error: `${failure.reason}: ${errorMessage(error)}`,
        });
      }
    }
  }
  if (failedForNow.length === 0) throw new ProviderCallError(`model call failed (${failures.join('; ')})`, 'deployment');
  const retryInMs = Math.min(...failedForNow.map((provider) => registry.traffic.cooldownLeftMs(provider)));
  throw new ProviderCallError(`model call failed (${failures.join('; ')})`, 'transient', { retryInMs });
}

/**
 * One candidate, under its deployment's limits, retried for transient failures (p-retry) honouring Retry-After, until
 * its retries run out or, unless it is the last candidate, it goes into cooldown.
 */
async function callWithRetries(
  traffic: ProviderTraffic,
  candidate: ModelCandidate,
  request: StreamModelTextRequest,
  delivered: { text: string },
  isLast: boolean,
): Promise<Omit<ModelTextResult, 'attempts'>> {
  const { catalogModel } = candidate;
  const signal = request.abortSignal;
  return pRetry(async (attempt) => {
    // Once text went out the call cannot park (its step's re-run would stream it again): it waits in place.
    const waiter = delivered.text === '' ? request.capacityWaiter : undefined;
    await traffic.takeCapacity({ model: catalogModel, tenantId: request.tenantId, inputTokens: estimateInput(request), signal, waiter, again: attempt > 1 });
    const startedAt = performance.now();
    try {
      const answer = await streamCandidate(candidate, request, delivered, traffic.settings.stallMs);
      countModelRequest(catalogModel, 'ok', startedAt, answer);
      traffic.recordSuccess(catalogModel.provider);
      return answer;
    } catch (error) {
      countModelRequest(catalogModel, signal?.aborted ? 'aborted' : 'error', startedAt);
      // p-retry never retries a TypeError unless it looks like a network one; undici reports a cut stream as one.
      throw error instanceof TypeError ? new Error(`stream ended early: ${error.message}`, { cause: error }) : error;
    }
  }, {
    retries: traffic.settings.retries,
    minTimeout: 250,
    factor: 2,
    maxTimeout: 4_000,
    randomize: true,
    signal,
    // A 429 that says when to come back is the provider pacing us, not failing: waiting for it spends no retry, but
    // all the waiting together is bounded.
    maxRetryTime: traffic.settings.maxWaitMs,
    shouldConsumeRetry: ({ error }) => {
      const failure = error instanceof StreamDivergedError ? undefined : classifyProviderError(error);
      return !(failure?.reason.startsWith('rate limited') && failure.retryAfterMs !== undefined);
    },
    onFailedAttempt: ({ error }) => {
      if (!(error instanceof StreamDivergedError) && classifyProviderError(error).kind === 'transient') traffic.recordFailure(catalogModel.provider);
    },
    shouldRetry: async ({ error, retryDelay }) => {
      if (error instanceof StreamDivergedError || signal?.aborted) return false;
      const failure = classifyProviderError(error);
      if (failure.kind !== 'transient') return false;
      // A cooldown sends the calls elsewhere; with nowhere else to go, the last candidate keeps its retries.
      if (!isLast && traffic.isCoolingDown(catalogModel.provider)) return false;
      const extraWait = (failure.retryAfterMs ?? 0) - retryDelay;
      if (extraWait > 0) await sleep(extraWait, undefined, { signal });
      return true;
    },
  });
}

/** The provider's answer after a restart differs from the text already delivered, which cannot be taken back. */
class StreamDivergedError extends Error {
  constructor(deliveredChars: number) {
    super(`the restarted answer differs from the ${deliveredChars} characters already streamed`);
    this.name = 'StreamDivergedError';
  }
}

/**
 * The history without its older half (from a user turn on, so no tool result loses its call), or undefined when
 * nothing older than the last turn is left to drop.
 */
export function trimOldestHistory(messages: ModelMessage[]): ModelMessage[] | undefined {
  const half = Math.floor(messages.length / 2);
  const from = messages.findIndex((message, index) => index >= Math.max(1, half) && message.role === 'user');
  return from <= 0 ? undefined : messages.slice(from);
}

const estimateInput = (request: StreamModelTextRequest) =>
  Math.ceil(((request.system?.length ?? 0) + request.messages.reduce((total, message) => total + (typeof message.content === 'string' ? message.content.length : JSON.stringify(message.content).length), 0)) / 4);

const modelName = ({ catalogModel }: ModelCandidate) => ({ provider: catalogModel.provider, model: catalogModel.name });

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function streamCandidate(
  candidate: ModelCandidate,
  request: StreamModelTextRequest,
  delivered: { text: string },
  stallMs: number,
): Promise<Omit<ModelTextResult, 'attempts'>> {
  const watch = watchForStall(request.abortSignal, stallMs);
  try {
    return await readCandidate(candidate, { ...request, abortSignal: watch.signal }, delivered, watch.touch);
  } catch (error) {
    // However the SDK reports the aborted request (an abort part, a rejected fetch), a stall is a timeout.
    throw watch.stalled ?? error;
  } finally {
    watch.stop();
  }
}

async function readCandidate(
  { catalogModel, languageModel, providerKind }: ModelCandidate,
  request: StreamModelTextRequest,
  delivered: { text: string },
  onPart: () => void,
): Promise<Omit<ModelTextResult, 'attempts'>> {
  const result = streamText({
    model: languageModel,
    ...markStablePrefix(providerKind, { system: request.system, messages: request.messages, tools: request.tools && toSdkTools(request.tools) }),
    maxOutputTokens: request.maxOutputTokens === undefined
      ? undefined : Math.min(request.maxOutputTokens, catalogModel.maxOutputTokens),
    toolChoice: request.toolChoice,
    output: jsonAnswerOf(request),
    ...request.callSettings,
    abortSignal: request.abortSignal,
    // Retries are ours (callWithRetries): they honour Retry-After, count towards cooldowns and take capacity again.
    maxRetries: 0,
    providerOptions: { mock: { ...request.mockOptions, delayMs: request.mockDelayMs ?? 0, answerWords: request.mockAnswerWords ?? 0 } as never },
    // streamText reports provider errors as stream parts, not rejections; they are thrown below.
    onError: () => {},
    experimental_telemetry: modelCallTelemetry(request),
  });
  let text = '';
  let usage: LanguageModelUsage | undefined;
  let finishReason: FinishReason | undefined;
  const toolCalls: RequestedToolCall[] = [];
  const deliver = (delta: string) => {
    const before = text.length;
    text += delta;
    if (before >= delivered.text.length) {
      delivered.text += delta;
      request.onDelta?.(delta);
      return;
    }
    // A restart repeating what an earlier attempt already delivered: checked, not delivered again.
    const overlap = Math.min(text.length, delivered.text.length);
    if (text.slice(before, overlap) !== delivered.text.slice(before, overlap)) throw new StreamDivergedError(delivered.text.length);
    if (text.length > delivered.text.length) {
      const fresh = text.slice(delivered.text.length);
      delivered.text = text;
      request.onDelta?.(fresh);
    }
  };
  // What the model says is stored (events, results, tool calls), so text Postgres refuses is replaced as it arrives.
  const deltas = storableDeltas();
  for await (const part of result.fullStream) {
    onPart();
    if (part.type === 'error') throw streamErrorOf(part.error);
    if (part.type === 'abort') throw toAbortError(request.abortSignal);
    if (part.type === 'finish') ({ totalUsage: usage, finishReason } = part);
    // A call of a tool that was not offered arrives as a tool-call marked invalid (NoSuchToolError), then a
    // tool-error part: it is kept, so the caller can refuse it and tell the model, instead of failing the turn.
    if (part.type === 'tool-call') toolCalls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: storableJson(part.input) });
    if (part.type === 'text-delta' && part.text.length > 0) {
      const delta = deltas.next(part.text);
      if (delta.length > 0) deliver(delta);
    }
  }
  const rest = deltas.end();
  if (rest.length > 0) deliver(rest);
  const inputTokens = usage?.inputTokens ?? 0;
  const outputTokens = usage?.outputTokens ?? 0;
  const cachedInputTokens = usage?.inputTokenDetails?.cacheReadTokens ?? 0;
  const cacheWriteTokens = usage?.inputTokenDetails?.cacheWriteTokens ?? 0;
  return {
    text,
    model: catalogModel.name,
    provider: catalogModel.provider,
    inputTokens,
    outputTokens,
    cachedInputTokens,
    cacheWriteTokens,
    costUsd: costUsd(catalogModel, inputTokens, outputTokens, cachedInputTokens, cacheWriteTokens),
    ...(request.tools ? { toolCalls } : {}),
    ...(finishReason ? { finishReason } : {}),
  };
}

/**
 * The AI SDK's own spans for the call (`ai.streamText` and its provider request `ai.streamText.doStream`, with
 * model, provider and token counts), under the span the call runs in. Only inside a traced span: a call outside any
 * (a session title) or with tracing off makes none. Prompts and answers stay out of spans: they are the users' data.
 */
function modelCallTelemetry(request: StreamModelTextRequest) {
  return { isEnabled: isTracedHere(), recordInputs: false, recordOutputs: false, ...request.telemetry };
}

/**
 * Structured output: the provider is asked for JSON of this schema, and the caller parses and validates the whole
 * text once. The SDK's `Output.object` would also parse the answer so far at every delta (repairing it into JSON,
 * and building an error whenever it cannot), which costs time quadratic in the answer's length: a long structured
 * answer (a research phase's claims or verdicts) spent more CPU there than in everything else the call does.
 */
function jsonAnswerOf(request: StreamModelTextRequest): OutputInterface<string, string, never> | undefined {
  const format = request.responseSchema ? { schema: request.responseSchema } : request.jsonAnswer;
  if (format === undefined) return undefined;
  return {
    name: 'object',
    responseFormat: Promise.resolve({ type: 'json', ...format }),
    parseCompleteOutput: async ({ text }) => text,
    parsePartialOutput: async ({ text }) => ({ partial: text }),
    createElementStreamTransform: () => undefined,
  };
}

/** Declared without `execute`, so the SDK reports the calls and runs none itself. */
export function toSdkTools(specs: ModelToolSpec[]): ToolSet {
  return Object.fromEntries(specs.map((spec) => [spec.name, tool({ description: spec.description, inputSchema: jsonSchema(spec.parameters) })]));
}
