import { Type, type Static } from 'typebox';

const TextPart = Type.Object({ type: Type.Literal('text'), text: Type.String() });

export const ChatMessage = Type.Object({
  role: Type.Enum(['system', 'user', 'assistant']),
  content: Type.Union([Type.String(), Type.Array(TextPart, { minItems: 1 })]),
  name: Type.Optional(Type.String({ maxLength: 256 })),
});

export const ChatCompletionBody = Type.Object({
  model: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
  messages: Type.Array(ChatMessage, { minItems: 1, maxItems: 1000 }),
  stream: Type.Optional(Type.Boolean()),
  max_tokens: Type.Optional(Type.Integer({ minimum: 1 })),
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  top_p: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  n: Type.Optional(Type.Integer()),
  stop: Type.Optional(Type.Union([Type.String(), Type.Array(Type.String(), { maxItems: 4 })])),
  presence_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  frequency_penalty: Type.Optional(Type.Number({ minimum: -2, maximum: 2 })),
  user: Type.Optional(Type.String({ maxLength: 256 })),
  stream_options: Type.Optional(Type.Object({ include_usage: Type.Optional(Type.Boolean()) })),
});
export type ChatCompletionRequest = Static<typeof ChatCompletionBody>;

export const ChatCompletionResponse = Type.Object({
  id: Type.String(),
  object: Type.Literal('chat.completion'),
  created: Type.Integer(),
  model: Type.String(),
  choices: Type.Array(Type.Object({
    index: Type.Integer(),
    message: Type.Object({ role: Type.Literal('assistant'), content: Type.String() }),
    finish_reason: Type.String(),
  })),
  usage: Type.Object({ prompt_tokens: Type.Integer(), completion_tokens: Type.Integer(), total_tokens: Type.Integer() }),
});

export const ModelObject = Type.Object({ id: Type.String(), object: Type.Literal('model'), created: Type.Integer(), owned_by: Type.String() });
export const ModelList = Type.Object({ object: Type.Literal('list'), data: Type.Array(ModelObject) });
export const ModelParams = Type.Object({ model: Type.String({ maxLength: 100 }) });

export const OpenAiErrorBody = Type.Object({
  error: Type.Object({ message: Type.String(), type: Type.String(), code: Type.String() }),
});
