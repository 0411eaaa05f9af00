import { Type, type Static } from 'typebox';

/**
 * Input items are checked field by field in input-items.ts, so that an item or content part of a kind we do
 * not take (`input_file`, `reasoning`, ...) is refused by its path and kind, not by a schema dump.
 */
const InputItem = Type.Object({
  type: Type.Optional(Type.String({ maxLength: 64 })),
  role: Type.Optional(Type.String({ maxLength: 64 })),
}, { additionalProperties: true });

/** A tool of the request; its kind and fields are checked in response-turn.ts, so a non-function tool is refused by its path. */
const ToolSchema = Type.Object({ type: Type.String({ maxLength: 64 }) }, { additionalProperties: true });

/** Fields of the current API reference that we do not honour: present in the schema (so documented), refused in refused-fields.ts unless no-op. */
const refusedUnlessNoOp = (description: string) => Type.Optional(Type.Unknown({ description }));

export const ResponseCreateBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  input: Type.Union([Type.String(), Type.Array(InputItem, { minItems: 1, maxItems: 1000 })]),
  instructions: Type.Optional(Type.Union([Type.String({ maxLength: 256_000 }), Type.Null()])),
  previous_response_id: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  max_output_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 16 }), Type.Null()])),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String({ maxLength: 64 }), Type.String({ maxLength: 512 }), { maxProperties: 16 }), Type.Null()])),
  store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  stream_options: Type.Optional(Type.Union([Type.Object({ include_obfuscation: Type.Optional(Type.Boolean()) }, { additionalProperties: false }), Type.Null()])),
  background: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  safety_identifier: Type.Optional(Type.Union([Type.String({ maxLength: 64 }), Type.Null()])),
  parallel_tool_calls: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  temperature: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 2 }), Type.Null()], { description: 'Forwarded to the model; 0.7 when not set (spec 4.11)' })),
  top_p: Type.Optional(Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()])),
  tools: Type.Optional(Type.Array(ToolSchema, { maxItems: 128, description: 'Function tools (the client runs them); other tool types are refused by name' })),
  tool_choice: Type.Optional(Type.Union([Type.Enum(['none', 'auto', 'required']), Type.Object({ type: Type.String(), name: Type.Optional(Type.String()) }, { additionalProperties: true }), Type.Null()])),
  text: Type.Optional(Type.Union([Type.Object({
    format: Type.Optional(Type.Object({
      type: Type.Enum(['text', 'json_object', 'json_schema']),
      name: Type.Optional(Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' })),
      schema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
      description: Type.Optional(Type.String()),
      strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
    }, { additionalProperties: false })),
    verbosity: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  }, { additionalProperties: false }), Type.Null()])),
  truncation: refusedUnlessNoOp('Only "disabled": a request too long for the model fails'),
  include: refusedUnlessNoOp('Only an empty list: no extra output data is available'),
  reasoning: refusedUnlessNoOp('Refused with 400 unless null or empty: reasoning settings are not supported'),
  service_tier: refusedUnlessNoOp('Only "auto" or "default"'),
  prompt: refusedUnlessNoOp('Stored prompt templates are not supported: refused with 400 unless null'),
  conversation: refusedUnlessNoOp('Conversations objects are not supported (chain with previous_response_id): refused with 400 unless null'),
  top_logprobs: refusedUnlessNoOp('Log probabilities are not available: refused with 400 unless null or 0'),
  prompt_cache_key: refusedUnlessNoOp('Prompt caching is not controlled here: refused with 400 unless null'),
  prompt_cache_retention: refusedUnlessNoOp('Prompt caching is not controlled here: refused with 400 unless null'),
  prompt_cache_options: refusedUnlessNoOp('Prompt caching is not controlled here: refused with 400 unless null'),
  context_management: refusedUnlessNoOp('Server-side compaction is not supported: refused with 400 unless null'),
  moderation: refusedUnlessNoOp('Moderation is not supported: refused with 400 unless null'),
}, { additionalProperties: false });
export type ResponseCreateRequest = Static<typeof ResponseCreateBody>;

export const ResponseIdParams = Type.Object({ responseId: Type.String({ maxLength: 100 }) });

export const ResponseRetrieveQuery = Type.Object({
  stream: Type.Optional(Type.Boolean()),
  starting_after: Type.Optional(Type.Integer({ minimum: -1, maximum: 2_147_483_647 })),
  include_obfuscation: Type.Optional(Type.Boolean()),
  include: Type.Optional(Type.Array(Type.String())),
}, { additionalProperties: false });

export const InputItemsQuery = Type.Object({
  after: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  order: Type.Optional(Type.Enum(['asc', 'desc'], { default: 'desc' })),
  include: Type.Optional(Type.Array(Type.String())),
}, { additionalProperties: false });

const Usage = Type.Object({
  input_tokens: Type.Integer(),
  input_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
  output_tokens: Type.Integer(),
  output_tokens_details: Type.Object({ reasoning_tokens: Type.Integer() }),
  total_tokens: Type.Integer(),
});

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Union([schema, Type.Null()]);

/** The response object of the OpenAI API (openai npm `Response`); nested items are typed in response-view.ts. */
export const ResponseObject = Type.Object({
  id: Type.String(),
  object: Type.Literal('response'),
  created_at: Type.Integer(),
  completed_at: nullable(Type.Integer()),
  status: Type.Enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']),
  background: Type.Boolean(),
  error: nullable(Type.Object({ code: Type.String(), message: Type.String() })),
  incomplete_details: nullable(Type.Object({ reason: Type.String() })),
  instructions: nullable(Type.String()),
  max_output_tokens: nullable(Type.Integer()),
  model: Type.String(),
  output: Type.Array(Type.Unknown()),
  parallel_tool_calls: Type.Boolean(),
  previous_response_id: nullable(Type.String()),
  reasoning: Type.Object({ effort: Type.Null(), summary: Type.Null() }),
  service_tier: Type.String(),
  store: Type.Boolean(),
  temperature: nullable(Type.Number()),
  text: Type.Object({ format: Type.Unknown() }),
  tool_choice: Type.Unknown(),
  tools: Type.Array(Type.Unknown()),
  top_p: nullable(Type.Number()),
  truncation: Type.Literal('disabled'),
  usage: nullable(Usage),
  user: nullable(Type.String()),
  safety_identifier: nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.String()),
});
export type ResponseView = Static<typeof ResponseObject>;

export const InputItemList = Type.Object({
  object: Type.Literal('list'),
  data: Type.Array(Type.Unknown()),
  first_id: nullable(Type.String()),
  last_id: nullable(Type.String()),
  has_more: Type.Boolean(),
});

export const DeletedResponse = Type.Object({ id: Type.String(), object: Type.Literal('response'), deleted: Type.Literal(true) });
