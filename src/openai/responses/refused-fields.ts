import { badRequest } from '../../errors.ts';
import { isEmptyList, isEmptyObject, never, refuseFields, type FieldCheck } from '../refuse-fields.ts';
import type { ResponseCreateRequest } from './schemas.ts';

/**
 * Fields of the API reference that this gateway does not honour (yet). Each is refused by name with 400 when it
 * asks for something, and accepted when it asks for nothing (the value that changes nothing: an empty tool list,
 * `tool_choice: "auto"` with no tools, ...), as clients and agent frameworks send those by default.
 */
const CHECKS: Record<string, FieldCheck> = {
  truncation: { isNoOp: (value) => value === 'disabled', why: 'can only be "disabled": a conversation too long for the model fails rather than losing its start' },
  include: { isNoOp: isEmptyList, why: 'can only be empty: no extra output data is available' },
  reasoning: { isNoOp: isEmptyObject, why: 'is not supported: the models behind this gateway take no reasoning settings' },
  service_tier: { isNoOp: (value) => value === 'auto' || value === 'default', why: 'can only be "auto" or "default"' },
  prompt: { isNoOp: never, why: 'is not supported: there are no stored prompt templates' },
  conversation: { isNoOp: never, why: 'is not supported: continue a conversation with previous_response_id' },
  top_logprobs: { isNoOp: (value) => value === 0, why: 'is not supported: log probabilities are not available' },
  prompt_cache_key: { isNoOp: never, why: 'is not supported: prompt caching is not controlled through this gateway' },
  prompt_cache_retention: { isNoOp: never, why: 'is not supported: prompt caching is not controlled through this gateway' },
  prompt_cache_options: { isNoOp: isEmptyObject, why: 'is not supported: prompt caching is not controlled through this gateway' },
  context_management: { isNoOp: isEmptyList, why: 'is not supported: there is no server-side compaction' },
  moderation: { isNoOp: never, why: 'is not supported: there is no moderation step' },
};

export function refuseUnsupportedFields(body: ResponseCreateRequest): void {
  refuseFields(body, CHECKS);
  const verbosity = body.text?.verbosity;
  if (verbosity !== undefined && verbosity !== null && verbosity !== 'medium') throw badRequest('text.verbosity can only be "medium": the models behind this gateway take no verbosity setting');
  if (body.stream_options?.include_obfuscation === true) throw badRequest('stream_options.include_obfuscation is not supported: stream events carry no obfuscation padding');
  if (body.background === true && body.store === false) throw badRequest('background requires store: a background response must be stored to be read back');
}
