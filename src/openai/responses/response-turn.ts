import { badRequest } from '../../errors.ts';
import type { ModelToolSpec } from '../../llm/stream-model-text.ts';
import { functionToolSpecs, toolChoiceOf, type FunctionDefinition } from '../client-tools.ts';
import type { ClientTurn } from '../client-turn.ts';
import { compileClientSchema } from '../json-schemas.ts';
import { DEFAULT_SERVICE_MODEL, type ServiceModel } from '../models.ts';
import type { StructuredOutput } from '../structured-output.ts';
import type { ResponseConversation } from './input-items.ts';
import type { ResponseCreateRequest } from './schemas.ts';

const FUNCTION_TOOL_KEYS = new Set(['type', 'name', 'description', 'parameters', 'strict']);

/**
 * The direct model turn a response needs (the chat layer's machinery, openai/chat-task.ts `ClientTurn`): with
 * function tools, a JSON text format, images, or function calls and their outputs in the conversation, the model gets the
 * conversation as it is, only the client's tools, and the format; undefined when the workflows answer as usual.
 */
export function responseTurnOf(body: ResponseCreateRequest, conversation: ResponseConversation, model: ServiceModel): ClientTurn | undefined {
  const tools = functionToolSpecs((body.tools ?? []).map(toFunctionDefinition), 'tools');
  const toolChoice = responseToolChoice(body.tool_choice, tools);
  const output = structuredOutputOf(body.text?.format);
  if (tools.length === 0 && !output && !conversation.hasFunctionItems && !conversation.hasImages) return undefined;
  if (model.mode !== 'simple') {
    const field = tools.length > 0 ? 'tools' : output ? 'text.format' : 'input';
    throw badRequest(`${field}: the ${model.id} model runs a workflow with the gateway's own tools and cannot take client functions, function call items, images or a JSON format; use ${DEFAULT_SERVICE_MODEL}, which answers in one direct model turn`);
  }
  return {
    messages: conversation.messages,
    ...(tools.length > 0 ? { tools, toolChoice } : {}),
    ...(output ? { output } : {}),
    ...(body.parallel_tool_calls === false ? { singleToolCall: true } : {}),
  };
}

function toFunctionDefinition(tool: Record<string, unknown>, index: number): FunctionDefinition {
  const path = `tools[${index}]`;
  if (tool.type !== 'function') throw badRequest(`${path}.type: ${String(tool.type)} tools are not supported (only function tools, which the client runs)`);
  for (const key of Object.keys(tool)) if (!FUNCTION_TOOL_KEYS.has(key)) throw badRequest(`unknown field in ${path}: ${key}`);
  if (typeof tool.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name)) throw badRequest(`${path}.name must be 1-64 letters, digits, "_" or "-"`);
  if (tool.description !== undefined && tool.description !== null && typeof tool.description !== 'string') throw badRequest(`${path}.description must be a string`);
  const parameters = tool.parameters ?? undefined;
  if (parameters !== undefined && (typeof parameters !== 'object' || Array.isArray(parameters))) throw badRequest(`${path}.parameters must be a JSON schema object`);
  return {
    name: tool.name, ...(typeof tool.description === 'string' ? { description: tool.description } : {}),
    ...(parameters ? { parameters: parameters as Record<string, unknown> } : {}),
  };
}

/** `"auto"` and `"none"` without tools ask for nothing (clients send them by default); a named function must be a tool. */
function responseToolChoice(choice: ResponseCreateRequest['tool_choice'], tools: ModelToolSpec[]) {
  if (choice === undefined || choice === null || (tools.length === 0 && (choice === 'auto' || choice === 'none'))) return toolChoiceOf(undefined, tools);
  if (typeof choice === 'string') return toolChoiceOf(choice, tools);
  if (choice.type !== 'function' || typeof choice.name !== 'string') throw badRequest(`tool_choice.type: ${String(choice.type)} is not supported (a function, or "none", "auto", "required")`);
  return toolChoiceOf({ name: choice.name }, tools);
}

/** `text.format` as the chat layer's structured output; a schema that does not compile is a 400 naming it. */
function structuredOutputOf(format: NonNullable<ResponseCreateRequest['text']>['format']): StructuredOutput | undefined {
  if (format === undefined || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { kind: 'json_object' };
  if (format.name === undefined) throw badRequest('text.format.name is required for a json_schema format');
  if (format.schema === undefined) throw badRequest('text.format.schema is required for a json_schema format');
  compileClientSchema(format.schema, 'text.format.schema');
  return { kind: 'json_schema', name: format.name, ...(format.description === undefined ? {} : { description: format.description }), schema: format.schema as never };
}
