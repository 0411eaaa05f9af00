import type { ModelCallSettings } from '../llm/stream-model-text.ts';

/** Spec 4.11: a request without `temperature` is answered at 0.7. */
export const DEFAULT_TEMPERATURE = 0.7;

type SamplingFields = {
  temperature?: number | null;
  top_p?: number | null;
  stop?: string | string[] | null;
  frequency_penalty?: number | null;
  presence_penalty?: number | null;
  seed?: number | null;
};

/**
 * The sampling fields of an OpenAI request as AI SDK call settings, forwarded to the provider (each provider takes
 * what it supports; the SDK warns about the rest). `null` is OpenAI's "not set".
 */
export function modelCallSettings(fields: SamplingFields): ModelCallSettings {
  const stop = fields.stop ?? undefined;
  return definedOnly({
    temperature: fields.temperature ?? DEFAULT_TEMPERATURE,
    topP: fields.top_p ?? undefined,
    stopSequences: stop === undefined ? undefined : [stop].flat().filter((sequence) => sequence !== ''),
    frequencyPenalty: fields.frequency_penalty ?? undefined,
    presencePenalty: fields.presence_penalty ?? undefined,
    seed: fields.seed ?? undefined,
  });
}

function definedOnly<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, entry]) => entry !== undefined)) as T;
}
