import { Type, type Static } from 'typebox';
import { ChatTool, ChatToolChoice } from './client-tools.ts';
import { ResponseFormat } from './structured-output.ts';

/**
 * A content part. `type` is checked here and the part's fields in chat-messages.ts, so that a part this layer does
 * not take (audio, files) is refused by name rather than as a failed union. The OpenAI Agents SDK sends an earlier
 * answer's text parts with the message's `role` and `refusal: null` in them: a `role` must be its message's.
 */
const ContentPart = Type.Object({
  type: Type.Enum(['text', 'image_url', 'input_audio', 'file', 'refusal']),
  role: Type.Optional(Type.Enum(['system', 'developer', 'user', 'assistant', 'tool'])),
  text: Type.Optional(Type.String()),
  image_url: Type.Optional(Type.Object({ url: Type.String({ minLength: 1 }), detail: Type.Optional(Type.Enum(['auto', 'low', 'high'])) }, { additionalProperties: false })),
  refusal: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  input_audio: Type.Optional(Type.Unknown()),
  file: Type.Optional(Type.Unknown()),
}, { additionalProperties: false });

const ToolCall = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 256 }),
  type: Type.Literal('function'),
  function: Type.Object({ name: Type.String({ minLength: 1, maxLength: 64 }), arguments: Type.String() }, { additionalProperties: false }),
}, { additionalProperties: false });

/** One message; which fields each role takes is checked in chat-messages.ts. `developer` is taken as `system`. */
export const ChatMessage = Type.Object({
  role: Type.Enum(['system', 'developer', 'user', 'assistant', 'tool']),
  content: Type.Optional(Type.Union([Type.String(), Type.Null(), Type.Array(ContentPart, { minItems: 1 })])),
  name: Type.Optional(Type.String({ maxLength: 256 })),
  tool_calls: Type.Optional(Type.Array(ToolCall, { maxItems: 128 })),
  tool_call_id: Type.Optional(Type.String({ minLength: 1, maxLength: 256 })),
  refusal: Type.Optional(Type.Null()),
}, { additionalProperties: false });
export type ChatMessage = Static<typeof ChatMessage>;

const nullable = <T extends Parameters<typeof Type.Union>[0][number]>(schema: T) => Type.Optional(Type.Union([schema, Type.Null()]));

/** The sampling fields chat and text completions share (call-settings.ts forwards them to the provider). */
const SamplingFields = {
  temperature: nullable(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: nullable(Type.Number({ minimum: 0, maximum: 1 })),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 }), Type.Null()])),
  presence_penalty: nullable(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: nullable(Type.Number({ minimum: -2, maximum: 2 })),
  seed: nullable(Type.Integer()),
};

const StreamOptions = nullable(Type.Object({ include_usage: Type.Optional(Type.Boolean()) }, { additionalProperties: false }));

/**
 * The request (spec 4.11, and the current OpenAI reference): every field is honoured or refused by name. Fields
 * that are harmless at their "off" value (logprobs false, store false, an empty logit_bias, text-only modalities,
 * the default service tier) are declared so that value passes; any other value is refused in chat-task.ts. Fields
 * not declared at all (audio, prediction, functions, …) are refused as unknown fields, by name.
 */
export const ChatCompletionBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  messages: Type.Array(ChatMessage, { minItems: 1, maxItems: 1000 }),
  stream: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  max_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  max_completion_tokens: Type.Optional(Type.Union([Type.Integer({ minimum: 1 }), Type.Null()])),
  ...SamplingFields,
  n: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  stream_options: StreamOptions,
  tools: Type.Optional(Type.Array(ChatTool)),
  tool_choice: Type.Optional(ChatToolChoice),
  parallel_tool_calls: Type.Optional(Type.Boolean()),
  response_format: Type.Optional(ResponseFormat),
  logprobs: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  top_logprobs: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
  logit_bias: Type.Optional(Type.Union([Type.Record(Type.String(), Type.Number()), Type.Null()])),
  store: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
  metadata: Type.Optional(Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()])),
  modalities: Type.Optional(Type.Union([Type.Array(Type.Enum(['text', 'audio'])), Type.Null()])),
  service_tier: Type.Optional(Type.Union([Type.String(), Type.Null()])),
}, { additionalProperties: false });
export type ChatCompletionRequest = Static<typeof ChatCompletionBody>;

/**
 * A legacy text completion (the OpenAI reference's `POST /v1/completions`): every field is honoured, or refused by
 * name at its values that ask for something this layer cannot do (text-completion.ts); `messages` is refused there too.
 */
export const TextCompletionBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  // Text, or a list of texts or token ids: which of them is taken is decided in text-completion.ts, naming the rest.
  prompt: Type.Union([Type.String(), Type.Array(Type.Unknown(), { minItems: 1, maxItems: 2048 }), Type.Null()]),
  max_tokens: nullable(Type.Integer({ minimum: 1 })),
  ...SamplingFields,
  echo: nullable(Type.Boolean()),
  stream: nullable(Type.Boolean()),
  stream_options: StreamOptions,
  user: Type.Optional(Type.String({ maxLength: 256 })),
  n: nullable(Type.Integer()),
  best_of: nullable(Type.Integer()),
  logprobs: nullable(Type.Integer()),
  logit_bias: nullable(Type.Record(Type.String(), Type.Number())),
  suffix: nullable(Type.String()),
}, { additionalProperties: false });
export type TextCompletionRequest = Static<typeof TextCompletionBody>;

const Usage = Type.Object({
  prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer(),
  prompt_tokens_details: Type.Object({ cached_tokens: Type.Integer() }),
});

export const TextCompletionResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal('text_completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(Type.Object({ index: Type.Integer(), text: Type.String(), logprobs: Type.Null(), finish_reason: Type.String() })),
  usage: Usage,
});

const ResponseToolCall = Type.Object({
  id: Type.String(), type: Type.Literal('function'), function: Type.Object({ name: Type.String(), arguments: Type.String() }),
});

export const ChatCompletionResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(Type.Object({
    index: Type.Integer(),
    message: Type.Object({
      role: Type.Literal('assistant'),
      content: Type.Union([Type.String(), Type.Null()]),
      refusal: Type.Null(),
      tool_calls: Type.Optional(Type.Array(ResponseToolCall)),
    }),
    logprobs: Type.Null(),
    finish_reason: Type.String(),
  })),
  usage: Usage,
});

export const ModelObject = Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() });
export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelObject) });
export const ModelParams = Type.Object({ model: Type.String({ maxLength: 100 }) });

export const OpenAiErrorBody = Type.Object({
  error: Type.Object({ message: Type.String(), type: Type.String(), code: Type.String() }),
});
