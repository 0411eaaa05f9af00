import { Ajv, type ValidateFunction } from 'ajv';
import { storableJson, storableText } from '../db/storable-text.ts';
import type { ToolContext, ToolDefinition, ToolOutcome, ToolRegistry } from './registry.ts';
import { countToolCall } from './tool-metrics.ts';

interface Entry {
  tool: ToolDefinition;
  validate: ValidateFunction;
}

/**
 * A registry of the given tools; a schema that does not compile, or a name used twice, fails here, at start-up.
 * `discovered` adds tools that come and go while the server runs (an MCP server's): a built-in wins a name
 * clash, and a discovered tool whose schema does not compile is left out.
 */
export function createToolRegistry(tools: ToolDefinition[], discovered: () => ToolDefinition[] = () => []): ToolRegistry {
  const entries = new Map<string, Entry>();
  for (const tool of tools) {
    if (entries.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    entries.set(tool.name, { tool, validate: validatorOf(tool) });
  }
  const discoveredEntries = (): Entry[] => discovered().flatMap((tool) => {
    if (entries.has(tool.name)) return [];
    const validate = validatorOrNull(tool);
    return validate ? [{ tool, validate }] : [];
  });
  const find = (name: string) => entries.get(name) ?? discoveredEntries().find((entry) => entry.tool.name === name);
  const findFor = (name: string, tenantId: string) => {
    const entry = find(name);
    return entry && isUsableBy(entry.tool, tenantId) ? entry : undefined;
  };
  return {
    get: (name) => find(name)?.tool,
    find: (name, tenantId) => findFor(name, tenantId)?.tool,
    list: (tenantId) => [...entries.values(), ...discoveredEntries()].map((entry) => entry.tool).filter((tool) => isUsableBy(tool, tenantId)),
    invoke(name, input, context) {
      const entry = findFor(name, context.tenantId);
      if (!entry) return countToolCall(undefined, async () => ({ error: `unknown tool: ${name}` }));
      return invokeTool(entry.tool, input, context);
    },
    inputErrors(name, input) {
      const validate = find(name)?.validate;
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
    if (!validate(input)) return { error: `invalid input for ${tool.name}: ${ajv.errorsText(validate.errors, { dataVar: 'input' })}` };
    return execute(tool, input as Record<string, unknown>, context);
  });
}

const ajv = new Ajv({ allErrors: true, strict: false });
/** Each definition's schema is compiled once, whatever registry or tool set holds it. */
const compiled = new WeakMap<ToolDefinition, ValidateFunction | null>();

/** The tool's validator; a schema that does not compile throws (at start-up, for a built-in). */
function validatorOf(tool: ToolDefinition): ValidateFunction {
  const validate = ajv.compile(tool.parameters as object);
  compiled.set(tool, validate);
  return validate;
}

/** The validator, or null for a schema that does not compile (a discovered tool's is left out, not fatal). */
function validatorOrNull(tool: ToolDefinition): ValidateFunction | null {
  if (!compiled.has(tool)) {
    try {
      validatorOf(tool);
    } catch {
      compiled.set(tool, null);
    }
  }
  return compiled.get(tool)!;
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
