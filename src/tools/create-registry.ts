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
  const ajv = new Ajv({ allErrors: true, strict: false });
  const entries = new Map<string, Entry>();
  for (const tool of tools) {
    if (entries.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    entries.set(tool.name, { tool, validate: ajv.compile(tool.parameters as object) });
  }
  const compiled = new WeakMap<ToolDefinition, ValidateFunction | null>();
  const discoveredEntries = (): Entry[] => discovered().flatMap((tool) => {
    if (entries.has(tool.name)) return [];
    if (!compiled.has(tool)) compiled.set(tool, compileOrNull(ajv, tool));
    const validate = compiled.get(tool);
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
      return countToolCall(entry?.tool.name, async () => {
        if (!entry) return { error: `unknown tool: ${name}` };
        if (!entry.validate(input)) {
          return { error: `invalid input for ${name}: ${ajv.errorsText(entry.validate.errors, { dataVar: 'input' })}` };
        }
        return execute(entry.tool, input as Record<string, unknown>, context);
      });
    },
    inputErrors(name, input) {
      const validate = find(name)?.validate;
      return !validate || validate(input) ? [] : [...validate.errors ?? []];
    },
  };
}

const isUsableBy = (tool: ToolDefinition, tenantId: string) => tool.tenants === undefined || tool.tenants.has(tenantId);

function compileOrNull(ajv: Ajv, tool: ToolDefinition): ValidateFunction | null {
  try {
    return ajv.compile(tool.parameters as object);
  } catch {
    return null;
  }
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
