import type { ValidateFunction } from 'ajv';
import { compileForeignSchema, errorsText } from '../json-schemas.ts';
import { storableJson, storableText } from '../db/storable-text.ts';
import type { ToolContext, ToolDefinition, ToolOutcome, ToolRegistry } from './registry.ts';
import { countToolCall } from './tool-metrics.ts';

/**
 * A registry of the given tools; a name used twice fails here, at start-up. Each schema is compiled at the tool's
 * first use, not at start-up, where compiling the built-ins' took about a twentieth of its CPU (a unit test compiles
 * every built-in's; one that does not compile makes each call an error naming the tool). `discovered` adds tools
 * that come and go while the server runs (an MCP server's): a built-in wins a name clash, and a discovered tool
 * whose schema does not compile is left out.
 */
export function createToolRegistry(tools: ToolDefinition[], discovered: () => ToolDefinition[] = () => []): ToolRegistry {
  const registered = new Map<string, ToolDefinition>();
  for (const tool of tools) {
    if (registered.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    registered.set(tool.name, tool);
  }
  const discoveredTools = (): ToolDefinition[] => discovered().filter((tool) => !registered.has(tool.name) && validatorOrNull(tool) !== null);
  const find = (name: string) => registered.get(name) ?? discoveredTools().find((tool) => tool.name === name);
  const findFor = (name: string, tenantId: string) => {
    const tool = find(name);
    return tool && isUsableBy(tool, tenantId) ? tool : undefined;
  };
  return {
    get: find,
    find: findFor,
    list: (tenantId) => [...registered.values(), ...discoveredTools()].filter((tool) => isUsableBy(tool, tenantId)),
    invoke(name, input, context) {
      const tool = findFor(name, context.tenantId);
      if (!tool) return countToolCall(undefined, async () => ({ error: `unknown tool: ${name}` }));
      return invokeTool(tool, input, context);
    },
    inputErrors(name, input) {
      const tool = find(name);
      const validate = tool && validatorOrNull(tool);
      return !validate || validate(input) ? [] : [...validate.errors ?? []];
    },
  };
}

const isUsableBy = (tool: ToolDefinition, tenantId: string) => tool.tenants === undefined || tool.tenants.has(tenantId);

/**
 * Runs a call of this tool, whichever set it comes from (the registry's, or a tool set an agent carries): the input
 * is validated against the tool's parameters first, and every failure of the call comes back as `error`; only an
 * abort of `context.signal` is thrown.
 */
export function invokeTool(tool: ToolDefinition, input: unknown, context: ToolContext): Promise<ToolOutcome> {
  return countToolCall(tool.name, async () => {
    const validate = validatorOrNull(tool);
    if (!validate) return { error: `tool ${tool.name} has parameters that are not a valid JSON schema` };
    if (!validate(input)) return { error: `invalid input for ${tool.name}: ${errorsText(validate.errors, 'input')}` };
    return execute(tool, input as Record<string, unknown>, context);
  });
}

/** Each definition's schema is compiled once, whatever registry or tool set holds it. */
const compiled = new WeakMap<ToolDefinition, ValidateFunction | null>();

/** The tool's validator, or null for a schema that does not compile. */
function validatorOrNull(tool: ToolDefinition): ValidateFunction | null {
  if (!compiled.has(tool)) {
    try {
      compiled.set(tool, compileToolSchema(tool));
    } catch {
      compiled.set(tool, null);
    }
  }
  return compiled.get(tool)!;
}

/** The tool's validator; throws what Ajv says of a schema that does not compile (the built-ins' unit test calls it too). */
export function compileToolSchema(tool: ToolDefinition): ValidateFunction {
  return compileForeignSchema(tool.parameters);
}

async function execute(tool: ToolDefinition, input: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
  try {
    const output = await untilAborted(tool.execute(input, context), context.signal);
    // As stored and as replayed: an output JSON cannot carry (a BigInt, a cycle) is the tool's error, and text
    // Postgres refuses (a fetched NUL) is replaced, so every tool's output can become an event and a step's record.
    return { output: storableJson(output) };
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    return { error: storableText(error instanceof Error ? error.message : String(error)) };
  }
}

/** A tool that ignores its signal is abandoned when it fires, so a cancel never waits for it. */
async function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([work, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
