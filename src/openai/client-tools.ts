import type { JSONSchema7 } from '@ai-sdk/provider';
import { Type, type Static } from 'typebox';
import { badRequest } from '../errors.ts';
import type { ModelToolChoice, ModelToolSpec, RequestedToolCall } from '../llm/stream-model-text.ts';
import { describeArgumentErrors } from '../tools-api/argument-errors.ts';
import { compileClientSchema } from './json-schemas.ts';

/**
 * Client-defined function tools (OpenAI function calling), shared by the chat-completions and Responses layers:
 * the tools are offered to the model without `execute` (the SDK runs none, stream-model-text.ts), the model's calls
 * go back to the client, and the client's results come back as messages of the next request.
 */

const FunctionName = Type.String({ pattern: '^[a-zA-Z0-9_-]{1,64}$' });

/** A function as OpenAI declares it (the chat-completions `function` object and the Responses tool alike). */
export const FunctionDefinition = Type.Object({
  name: FunctionName,
  description: Type.Optional(Type.String({ maxLength: 100_000 })),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  strict: Type.Optional(Type.Union([Type.Boolean(), Type.Null()])),
}, { additionalProperties: false });
export type FunctionDefinition = Static<typeof FunctionDefinition>;

export const ChatTool = Type.Object({ type: Type.Literal('function'), function: FunctionDefinition }, { additionalProperties: false });
export type ChatTool = Static<typeof ChatTool>;

export const ChatToolChoice = Type.Union([
  Type.Enum(['none', 'auto', 'required']),
  Type.Object({ type: Type.Literal('function'), function: Type.Object({ name: FunctionName }, { additionalProperties: false }) }, { additionalProperties: false }),
]);
export type ChatToolChoice = Static<typeof ChatToolChoice>;

/** A call as OpenAI returns it: `arguments` is the JSON text of the input. */
export type OpenAiToolCall = { id: string; type: 'function'; function: { name: string; arguments: string } };

const MAX_TOOLS = 128;
const NO_PARAMETERS: JSONSchema7 = { type: 'object', properties: {} };

/** The functions offered to the model; `field` names the request field in errors (`tools`). */
export function functionToolSpecs(functions: FunctionDefinition[], field = 'tools'): ModelToolSpec[] {
  if (functions.length > MAX_TOOLS) throw badRequest(`invalid ${field}: at most ${MAX_TOOLS} tools`);
  const seen = new Set<string>();
  return functions.map((definition, index) => {
    if (seen.has(definition.name)) throw badRequest(`invalid ${field}: the function ${definition.name} is declared twice`);
    seen.add(definition.name);
    const parameters = (definition.parameters ?? NO_PARAMETERS) as JSONSchema7;
    compileClientSchema(parameters, `${field}.${index}.parameters`);
    return { name: definition.name, description: definition.description ?? '', parameters };
  });
}

/** Chat-completions `tools` as specs. */
export const chatToolSpecs = (tools: ChatTool[]): ModelToolSpec[] => functionToolSpecs(tools.map((tool) => tool.function));

/** The functions declared `strict: true`. */
export const strictFunctionNames = (functions: FunctionDefinition[]): string[] => functions.filter((definition) => definition.strict === true).map((definition) => definition.name);

/** A tool choice in either layer's shape: chat completions name the function in `function.name`, Responses in `name`. */
export type ToolChoiceInput = 'none' | 'auto' | 'required' | { name: string };

/**
 * `tool_choice` as the AI SDK takes it. Default `auto` with tools (OpenAI's default). A named function must be one
 * of the tools; any choice without tools is a 400, as OpenAI answers it.
 */
export function toolChoiceOf(choice: ToolChoiceInput | undefined, tools: ModelToolSpec[], field = 'tool_choice'): ModelToolChoice {
  if (tools.length === 0 && choice !== undefined) throw badRequest(`${field} requires tools`);
  if (choice === undefined) return 'auto';
  if (typeof choice === 'string') return choice;
  if (!tools.some((tool) => tool.name === choice.name)) throw badRequest(`invalid ${field}: ${choice.name} is not one of the tools`);
  return { type: 'tool', toolName: choice.name };
}

/** The chat-completions `tool_choice`. */
export const modelToolChoice = (choice: ChatToolChoice | undefined, tools: ModelToolSpec[]): ModelToolChoice =>
  toolChoiceOf(typeof choice === 'object' ? { name: choice.function.name } : choice, tools);

/** The model's calls as OpenAI returns them; `single` keeps only the first (`parallel_tool_calls: false`). */
export function toOpenAiToolCalls(calls: RequestedToolCall[], single = false): OpenAiToolCall[] {
  return (single ? calls.slice(0, 1) : calls).map((call) => ({
    id: call.toolCallId, type: 'function', function: { name: call.toolName, arguments: JSON.stringify(call.input ?? {}) },
  }));
}

/** Thrown when a call of a `strict` function does not match its parameters. */
export class ToolArgumentsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolArgumentsError';
  }
}

/**
 * `strict: true` functions (OpenAI: the arguments always match the parameters): each call of one is checked against
 * its schema, and one that does not match fails the turn naming the function, rather than reaching the client.
 */
export function checkStrictCalls(calls: RequestedToolCall[], tools: ModelToolSpec[], strict: string[]): void {
  for (const call of calls.filter((candidate) => strict.includes(candidate.toolName))) {
    const spec = tools.find((tool) => tool.name === call.toolName);
    if (!spec) continue;
    const validate = compileClientSchema(spec.parameters, `tools.${call.toolName}.parameters`);
    if (!validate(call.input)) {
      const problem = describeArgumentErrors(validate.errors ?? []);
      throw new ToolArgumentsError(`the model's call of ${call.toolName} does not match its parameters (strict): ${problem}`);
    }
  }
}

/** The input of a call the client sends back: its `arguments` text parsed, or the text itself when it is not JSON. */
export function parseToolArguments(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
