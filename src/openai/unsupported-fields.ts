import { badRequest } from '../errors.ts';

/**
 * Fields of the current OpenAI chat-completions request this layer does not honour, with why: refused by name
 * before validation, so the client learns what to change rather than only that the field is unknown.
 */
const REFUSED: Record<string, string> = {
  audio: 'audio output is not supported (text only)',
  prediction: 'predicted outputs are not supported',
  functions: 'the legacy functions field is not supported: declare them in tools',
  function_call: 'the legacy function_call field is not supported: use tool_choice',
  reasoning_effort: 'reasoning_effort is not supported: the models behind the gateway are chosen by its catalogue',
  verbosity: 'verbosity is not supported',
  web_search_options: 'web_search_options is not supported: the research models (service-quick-research, …) search the web',
  prompt_cache_key: 'prompt_cache_key is not supported',
  safety_identifier: 'safety_identifier is not supported: send the end user in user',
};

export function refuseUnsupportedFields(body: unknown): void {
  if (typeof body !== 'object' || body === null) return;
  const field = Object.keys(body).find((key) => key in REFUSED && (body as Record<string, unknown>)[key] !== null);
  if (field) throw badRequest(`${field}: ${REFUSED[field]}`);
}
