import { Type } from 'typebox';
import { SESSION_ID_PATTERN } from '../id-formats.ts';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

export const ToolNameParams = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 256, description: 'the tool name, e.g. `calculator`' }),
});

export const ListToolsQuery = Type.Object({
  category: Type.Optional(Type.String({ maxLength: 64, description: 'only the tools of this category, e.g. `math` (empty: all)' })),
});

const toolFields = {
  name: Type.String(),
  description: Type.String(),
  category: Type.String(),
  parameters: Type.Record(Type.String(), Type.Unknown(), { description: 'the JSON schema of the tool\'s arguments' }),
  cost_per_use: Type.Number({ description: 'USD charged per call' }),
};

/** One tool as Shannon's SDK lists it (`list_tools`): its schema, with category and price. */
export const ToolSummary = Type.Object(toolFields);

export const ListToolsResponse = Type.Object({ tools: Type.Array(ToolSummary) });

/** `get_tool`: the summary and the version of the server the tool ships with. */
export const ToolDetail = Type.Object({ ...toolFields, version: Type.String() });

export const ExecuteToolBody = Type.Object({
  arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'the tool\'s arguments (`{}` when left out)' })),
  session_id: Type.Optional(Type.String({ pattern: SESSION_ID_PATTERN, description: 'a session of the caller (UUID or custom id): file tools work in its workspace' })),
});

/** `execute_tool` (Shannon's shape): a tool that ran and failed is `success: false` with its `error`, still 200. */
export const ExecuteToolResponse = Type.Object({
  success: Type.Boolean(),
  output: Type.Unknown({ description: 'the tool\'s output (any JSON); null when it failed' }),
  text: Nullable(Type.String({ description: 'the output as text' })),
  error: Nullable(Type.String()),
  metadata: Type.Record(Type.String(), Type.Unknown()),
  execution_time_ms: Type.Integer(),
  usage: Type.Object({
    tokens: Type.Integer({ description: 'always 0: a tool call spends no model tokens' }),
    cost_usd: Type.Number(),
  }),
});
