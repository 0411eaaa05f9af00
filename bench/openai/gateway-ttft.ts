import OpenAI from 'openai';
import type { ClosedLoopOptions, ClosedLoopRun } from './closed-loop.ts';
import { runClosedLoop } from './closed-loop.ts';

const REQUEST_TIMEOUT_MS = 30_000;
/** Development mode needs no key; the client insists on one. */
export const DEVELOPMENT_KEY = 'development';

/**
 * Streams chat completions from the gateway with the official OpenAI client, as an application would; the
 * first token is the first chunk whose `choices[0].delta.content` is non-empty (the role chunk has none).
 */
export async function measureGatewayTtft(gatewayUrl: string, apiKey: string, options: ClosedLoopOptions): Promise<ClosedLoopRun> {
  const client = new OpenAI({ baseURL: `${gatewayUrl}/v1`, apiKey, maxRetries: 0, timeout: REQUEST_TIMEOUT_MS });
  return runClosedLoop(options, async (query, onFirstToken) => {
    const stream = await client.chat.completions.create({ model: 'service-chat', stream: true, messages: [{ role: 'user', content: query }] });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.delta?.content) onFirstToken();
    }
  });
}
