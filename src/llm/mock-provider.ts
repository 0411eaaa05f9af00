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

/**
 * A deterministic AI SDK model for offline runs and tests. It streams its answer word by word;
 * `providerOptions.mock.delayMs` spreads the whole answer over about that many milliseconds.
 * Tools are ignored for now.
 */
export function createMockModel(modelId: string): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: 'mock',
    modelId,
    supportedUrls: {},
    async doGenerate(options) {
      const reply = prepareReply(options);
      await pause(readDelayMs(options), options.abortSignal);
      return {
        content: [{ type: 'text', text: reply.tokens.join('') }],
        finishReason: reply.finishReason,
        usage: reply.usage,
        warnings: [],
      };
    },
    async doStream(options) {
      if (options.abortSignal?.aborted) throw toAbortError(options.abortSignal);
      const reply = prepareReply(options);
      const parts = streamReply(reply, modelId, readDelayMs(options), options.abortSignal);
      return { stream: toReadableStream(parts) };
    },
  };
}

type Reply = { tokens: string[]; finishReason: LanguageModelV3FinishReason; usage: LanguageModelV3Usage };

function prepareReply(options: LanguageModelV3CallOptions): Reply {
  // A test or demo scripts an agent's failure with context.mock_failures (workflows/runtime/task-settings.ts).
  if (options.providerOptions?.mock?.fail === true) throw new Error('scripted mock failure');
  const allTokens = composeMockAnswer(options).match(/\S+\s*/g) ?? [];
  // Truncating JSON would make it invalid, and structured answers must stay valid.
  const limit = options.responseFormat?.type === 'json' ? Infinity : options.maxOutputTokens ?? Infinity;
  const tokens = allTokens.slice(0, limit);
  const isTruncated = tokens.length < allTokens.length;
  const inputTokens = estimatePromptTokens(options.prompt);
  return {
    tokens,
    finishReason: isTruncated ? { unified: 'length', raw: 'length' } : { unified: 'stop', raw: 'stop' },
    usage: {
      inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: tokens.length, text: tokens.length, reasoning: undefined },
    },
  };
}

async function* streamReply(
  reply: Reply,
  modelId: string,
  delayMs: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<LanguageModelV3StreamPart> {
  yield { type: 'stream-start', warnings: [] };
  yield { type: 'response-metadata', id: 'mock-response', modelId, timestamp: new Date() };
  yield { type: 'text-start', id: 'text-0' };
  const tokenDelayMs = reply.tokens.length > 0 ? delayMs / reply.tokens.length : 0;
  for (const [index, token] of reply.tokens.entries()) {
    await pause(tokenDelayMs, signal);
    // Without a delay the stream would run in microtasks only; yield now and then so timers
    // (delta coalescing, heartbeats) and other requests keep running during a long answer.
    if (tokenDelayMs <= 0 && index % 256 === 255) await yieldToEventLoop();
    yield { type: 'text-delta', id: 'text-0', delta: token };
  }
  yield { type: 'text-end', id: 'text-0' };
  yield { type: 'finish', finishReason: reply.finishReason, usage: reply.usage };
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
