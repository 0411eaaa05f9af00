import path from 'node:path';
import { loadModelCatalog } from '../../src/llm/model-catalog.ts';
import { createModelRegistry } from '../../src/llm/provider-registry.ts';
import { streamModelText } from '../../src/llm/stream-model-text.ts';
import { buildSystemPrompt } from '../../src/workflows/agent-calls/system-prompt.ts';
import { parseTaskSettings } from '../../src/workflows/runtime/task-settings.ts';
import type { ClosedLoopOptions, ClosedLoopRun } from './closed-loop.ts';
import { runClosedLoop } from './closed-loop.ts';

/** The `max_tokens` a `service-chat` request without one runs with (src/openai/models.ts). */
const SERVICE_CHAT_MAX_TOKENS = 4096;

/**
 * The mock model alone, in this process, through the same `streamModelText` the gateway's agent calls, with
 * the prompt a `service-chat` request without a system message gets (the default role's system prompt and
 * the query): the same answer, so the same number of tokens over the same delay.
 */
export async function measureMockTtft(root: string, mockDelayMs: number, options: ClosedLoopOptions): Promise<ClosedLoopRun> {
  // No credentials, as the benchmark's gateway has none: the registry resolves to the mock provider.
  const registry = createModelRegistry(loadModelCatalog(path.join(root, 'config/models.yaml')), {});
  const system = buildSystemPrompt(parseTaskSettings({}, {}));
  return runClosedLoop(options, async (query, onFirstToken) => {
    await streamModelText(registry, {
      selection: {}, system, messages: [{ role: 'user', content: query }], maxOutputTokens: SERVICE_CHAT_MAX_TOKENS,
      mockDelayMs, onDelta: onFirstToken,
    });
  });
}
