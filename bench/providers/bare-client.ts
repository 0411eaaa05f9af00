import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { streamText, type ModelMessage } from 'ai';

export type BareRun = { completed: number; failed: number; failures: Map<string, number>; wallMs: number };

/**
 * The same tasks through the AI SDK alone, as an application without a gateway would send them: every call at once,
 * `streamText` with its default retries (2, honouring Retry-After under a minute), nothing else between the calls and
 * the provider's limit.
 */
export async function runBareClient(baseUrl: string, prompts: Array<{ system?: string; messages: ModelMessage[] }>): Promise<BareRun> {
  const provider = createOpenAICompatible({ name: 'bare', baseURL: baseUrl, includeUsage: true });
  const failures = new Map<string, number>();
  let completed = 0;
  const started = performance.now();
  await Promise.all(prompts.map(async (prompt) => {
    try {
      const result = streamText({ model: provider('bench-model'), ...prompt, onError: () => {} });
      for await (const part of result.fullStream) if (part.type === 'error') throw part.error;
      completed += 1;
    } catch (error) {
      const reason = error instanceof Error ? `${error.name}: ${error.message.slice(0, 80)}` : String(error);
      failures.set(reason, (failures.get(reason) ?? 0) + 1);
    }
  }));
  return { completed, failed: prompts.length - completed, failures, wallMs: performance.now() - started };
}
