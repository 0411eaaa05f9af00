import { setTimeout as sleep } from 'node:timers/promises';
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3FinishReason,
  LanguageModelV3StreamPart,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { isAbortError, toAbortError } from './abort-error.ts';
import { composeMockAnswer, estimatePromptTokens } from './mock-answer.ts';
import { isResearchCall } from './mock-research.ts';
import { chooseMockToolCalls, toolResultsNote, type MockToolCall } from './mock-tool-calls.ts';

/** The deployment's settings of the mock (config.ts). */
export interface MockSettings {
  /** How long every call waits before its first part, tool-call turns and structured answers included. */
  latencyMs?: number;
}

/**
 * A deterministic AI SDK model for offline runs and tests. It streams its answer word by word;
 * `providerOptions.mock.delayMs` spreads the whole answer over about that many milliseconds, and
 * `settings.latencyMs` comes before any call's answer, as a provider's time to first token does.
 * It calls tools when scripted to, or when asked by name (mock-tool-calls.ts); a turn that calls tools
 * has no text.
 */
export function createMockModel(modelId: string, settings: MockSettings = {}): LanguageModelV3 {
  const latencyMs = settings.latencyMs ?? 0;
  return {
    specificationVersion: 'v3',
    provider: 'mock',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const reply = prepareReply(options);
      await pause(latencyMs + readDelayMs(options), options.abortSignal);
      return {
        content: reply.toolCalls.length > 0
          ? reply.toolCalls.map((call) => ({ type: 'tool-call' as const, toolCallId: call.toolCallId, toolName: call.toolName, input: JSON.stringify(call.input) }))
          : [{ type: 'text', text: reply.tokens.join('') }],
        finishReason: reply.finishReason,
        usage: reply.usage,
        warnings: [],
      };
    },
    async doStream(options) {
      if (options.abortSignal?.aborted) throw toAbortError(options.abortSignal);
      const reply = prepareReply(options);
      const parts = streamReply(reply, modelId, { latencyMs, delayMs: readDelayMs(options) }, options.abortSignal);
      return { stream: toReadableStream(parts) };
    },
  };
}

type Reply = { tokens: string[]; toolCalls: MockToolCall[]; finishReason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage };

function prepareReply(options: LanguageModelV3CallOptions): Reply {
  // A test or demo scripts an agent's failure with context.mock_failures (workflows/runtime/task-settings.ts).
  if (options.providerOptions?.mock?.fail === true) throw new Error('scripted mock failure');
  const toolCalls = chooseMockToolCalls(options);
  if (toolCalls.length > 0) return toolCallReply(options, toolCalls);
  const allTokens = answerText(options).match(/\S+\s*/g) ?? [];
  // Truncating JSON would make it invalid, and structured answers must stay valid.
  const limit = options.responseFormat?.type === 'json' ? Infinity : options.maxOutputTokens ?? Infinity;
  const tokens = allTokens.slice(0, limit);
  const isTruncated = tokens.length < allTokens.length;
  return {
    tokens,
    toolCalls: [],
    finishReason: isTruncated ? { unified: 'length', raw: 'length' } : { unified: 'stop', raw: 'stop' },
    usage: usageOf(options, tokens.length),
  };
}

/** The lead's answer (mock-answer.ts), plus what the tools in the prompt returned (a research phase cites its own). */
function answerText(options: LanguageModelV3CallOptions): string {
  const answer = composeMockAnswer(options);
  return options.responseFormat?.type === 'json' || isResearchCall(options) ? answer : answer + toolResultsNote(options.prompt);
}

function toolCallReply(options: LanguageModelV3CallOptions, toolCalls: MockToolCall[]): Reply {
  const outputTokens = Math.ceil(JSON.stringify(toolCalls).length / 4);
  return { tokens: [], toolCalls, finishReason: { unified: 'tool-calls', raw: 'tool_calls' }, usage: usageOf(options, outputTokens) };
}

function usageOf(options: LanguageModelV3CallOptions, outputTokens: number): LanguageModelV3Usage {
  const inputTokens = estimatePromptTokens(options.prompt);
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: undefined },
  };
}

async function* streamReply(
  reply: Reply,
  modelId: string,
  { latencyMs, delayMs }: { latencyMs: number; delayMs: number },
  signal: AbortSignal | undefined,
): AsyncGenerator<LanguageModelV3StreamPart> {
  await pause(latencyMs, signal);
  yield { type: 'stream-start', warnings: [] };
  yield { type: 'response-metadata', id: 'mock-response', modelId, timestamp: new Date() };
  for (const call of reply.toolCalls) {
    yield { type: 'tool-call', toolCallId: call.toolCallId, toolName: call.toolName, input: JSON.stringify(call.input) };
  }
  if (reply.toolCalls.length === 0) yield* streamTokens(reply.tokens, delayMs, signal);
  yield { type: 'finish', finishReason: reply.finishReason, usage: reply.usage };
}

async function* streamTokens(tokens: string[], delayMs: number, signal: AbortSignal | undefined): AsyncGenerator<LanguageModelV3StreamPart> {
  yield { type: 'text-start', id: 'text-0' };
  const tokenDelayMs = tokens.length > 0 ? delayMs / tokens.length : 0;
  // Each token is due at its own time from the start, as a provider's stream arrives whatever our pace: a pause
  // of the token's share after each would stretch the answer by every late timer of a busy process.
  const startedAt = performance.now();
  let tokensWithoutWait = 0;
  for (const [index, token] of tokens.entries()) {
    const waitMs = startedAt + (index + 1) * tokenDelayMs - performance.now();
    await pause(waitMs, signal);
    // Tokens already due (no delay, or a stream running late) would run in microtasks only; yield now and then
    // so timers (delta coalescing, heartbeats) and other requests keep running during a long answer.
    tokensWithoutWait = waitMs > 0 ? 0 : tokensWithoutWait + 1;
    if (tokensWithoutWait % 256 === 255) await yieldToEventLoop();
    yield { type: 'text-delta', id: 'text-0', delta: token };
  }
  yield { type: 'text-end', id: 'text-0' };
}

// The DOM typings we compile against lack ReadableStream.from.
function toReadableStream<T>(iterator: AsyncGenerator<T>): ReadableStream<T> {
  return new ReadableStream<T>({
    async pull(controller) {
      const next = await iterator.next();
      if (next.done) controller.close();
      else controller.enqueue(next.value);
    },
    async cancel() {
      await iterator.return(undefined);
    },
  });
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Waits without a timer when `milliseconds` is 0; rejects with an AbortError as soon as `signal` fires. */
async function pause(milliseconds: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) throw toAbortError(signal);
  if (milliseconds <= 0) return;
  try {
    await sleep(milliseconds, undefined, { signal });
  } catch (error) {
    throw isAbortError(error) ? toAbortError(signal) : error;
  }
}

function readDelayMs(options: LanguageModelV3CallOptions): number {
  const delayMs = options.providerOptions?.mock?.delayMs;
  return typeof delayMs === 'number' && delayMs > 0 ? delayMs : 0;
}
