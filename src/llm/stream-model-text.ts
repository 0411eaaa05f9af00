import type { JSONSchema7 } from '@ai-sdk/provider';
import { jsonSchema, streamText, tool, type LanguageModelUsage, type ModelMessage, type OutputInterface, type ToolSet } from 'ai';
import { storableDeltas, storableJson } from '../db/storable-text.ts';
import { isTracedHere } from '../observability/spans.ts';
import { toAbortError } from './abort-error.ts';
import { costUsd } from './cost.ts';
import { countModelRequest } from './model-metrics.ts';
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
  costUsd: number;
  /** Candidates tried, this one included (1 when the first answered). */
  attempts: number;
  /** Present when the request offered tools: the calls the model asked for, in order. */
  toolCalls?: RequestedToolCall[];
};

/**
 * Streams one answer. Candidates are tried in the registry's order: a provider error before any
 * text was delivered moves on to the next one; an abort, or an error after text went out (the
 * caller has already shown it), is rethrown. When every candidate fails, the last error is thrown.
 */
export async function streamModelText(
  registry: ModelRegistry,
  request: StreamModelTextRequest,
): Promise<ModelTextResult> {
  const failures: string[] = [];
  const candidates = registry.resolveCandidates(request.selection);
  for (const [index, candidate] of candidates.entries()) {
    const progress = { hasDeliveredText: false };
    const startedAt = performance.now();
    try {
      const answer = await streamCandidate(candidate, request, progress);
      countModelRequest(candidate.catalogModel, 'ok', startedAt, answer);
      return { ...answer, attempts: failures.length + 1 };
    } catch (error) {
      countModelRequest(candidate.catalogModel, request.abortSignal?.aborted ? 'aborted' : 'error', startedAt);
      if (request.abortSignal?.aborted) throw error;
      const failure = `${candidate.catalogModel.provider}/${candidate.catalogModel.name}: ${errorMessage(error)}`;
      if (progress.hasDeliveredText) throw new Error(`model call failed mid-answer (${failure})`, { cause: error });
      failures.push(failure);
      const next = candidates[index + 1];
      if (next !== undefined) {
        await request.onFallback?.({
          attempt: index + 1, failed: modelName(candidate), next: modelName(next), error: errorMessage(error),
        });
      }
    }
  }
  throw new Error(`model call failed (${failures.join('; ')})`);
}

const modelName = ({ catalogModel }: ModelCandidate) => ({ provider: catalogModel.provider, model: catalogModel.name });

const errorMessage = (error: unknown) => (error instanceof Error ? error.message : String(error));

async function streamCandidate(
  { catalogModel, languageModel }: ModelCandidate,
  request: StreamModelTextRequest,
  progress: { hasDeliveredText: boolean },
): Promise<Omit<ModelTextResult, 'attempts'>> {
  const result = streamText({
    model: languageModel,
    system: request.system,
    messages: request.messages,
    maxOutputTokens: request.maxOutputTokens === undefined
      ? undefined : Math.min(request.maxOutputTokens, catalogModel.maxOutputTokens),
    tools: request.tools && toSdkTools(request.tools),
    toolChoice: request.toolChoice,
    output: jsonAnswerOf(request),
    ...request.callSettings,
    abortSignal: request.abortSignal,
    // One quick retry for a transient failure; beyond that, falling back to the next candidate
    // beats the SDK's default of two retries with 2 s and 4 s back-off.
    maxRetries: 1,
    providerOptions: { mock: { ...request.mockOptions, delayMs: request.mockDelayMs ?? 0, answerWords: request.mockAnswerWords ?? 0 } as never },
    // streamText reports provider errors as stream parts, not rejections; they are rethrown below.
    onError: () => {},
    experimental_telemetry: modelCallTelemetry(request),
  });
  let text = '';
  let usage: LanguageModelUsage | undefined;
  const toolCalls: RequestedToolCall[] = [];
  const deliver = (delta: string) => {
    text += delta;
    progress.hasDeliveredText = true;
    request.onDelta?.(delta);
  };
  // What the model says is stored (events, results, tool calls), so text Postgres refuses is replaced as it arrives.
  const deltas = storableDeltas();
  for await (const part of result.fullStream) {
    if (part.type === 'error') throw part.error;
    if (part.type === 'abort') throw toAbortError(request.abortSignal);
    if (part.type === 'finish') usage = part.totalUsage;
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
  return {
    text,
    model: catalogModel.name,
    provider: catalogModel.provider,
    inputTokens,
    outputTokens,
    costUsd: costUsd(catalogModel, inputTokens, outputTokens),
    ...(request.tools ? { toolCalls } : {}),
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
