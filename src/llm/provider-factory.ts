import type { LanguageModelV3 } from '@ai-sdk/provider';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ProviderSpec } from './model-catalog.ts';
import { createMockModel, type MockSettings } from './mock-provider.ts';

export type LanguageModelFactory = (modelId: string) => LanguageModelV3;

/** The variable that makes `provider` usable: its API key, or for an OpenAI-style server its URL. */
export function credentialEnv(provider: ProviderSpec): string | undefined {
  if (provider.kind === 'mock') return undefined;
  return provider.kind === 'openai-compatible' ? provider.baseUrlEnv : provider.apiKeyEnv;
}

/** An AI SDK provider instance for `provider`, or undefined when its credential is not set. */
export function createModelFactory(
  provider: ProviderSpec,
  env: Record<string, string | undefined>,
  mock: MockSettings = {},
): LanguageModelFactory | undefined {
  const required = credentialEnv(provider);
  if (required !== undefined && !env[required]) return undefined;
  const apiKey = readSetting(env, provider.apiKeyEnv);
  const baseURL = readSetting(env, provider.baseUrlEnv);
  switch (provider.kind) {
    case 'openai':
      return createOpenAI({ apiKey, baseURL });
    case 'anthropic':
      return createAnthropic({ apiKey, baseURL });
    case 'google':
      return createGoogleGenerativeAI({ apiKey, baseURL });
    case 'openai-compatible':
      // Without includeUsage, OpenAI-style servers report no token counts when streaming. vLLM, LM Studio and
      // Ollama take a json_schema response_format: a structured call sends its schema, not only "some JSON".
      return createOpenAICompatible({ name: provider.name, baseURL: baseURL ?? '', apiKey, includeUsage: true, supportsStructuredOutputs: true });
    case 'mock':
      return (modelId) => createMockModel(modelId, mock);
  }
}

function readSetting(env: Record<string, string | undefined>, name: string | undefined): string | undefined {
  return name === undefined ? undefined : env[name] || undefined;
}
