import { Ajv, type ValidateFunction } from 'ajv';
import type { ToolContext, ToolDefinition, ToolOutcome, ToolRegistry } from './registry.ts';

interface Entry {
  tool: ToolDefinition;
  validate: ValidateFunction;
}

/** A registry of the given tools; a schema that does not compile, or a name used twice, fails here, at start-up. */
export function createToolRegistry(tools: ToolDefinition[]): ToolRegistry {
  const ajv = new Ajv({ allErrors: true, strict: false });
  const entries = new Map<string, Entry>();
  for (const tool of tools) {
    if (entries.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    entries.set(tool.name, { tool, validate: ajv.compile(tool.parameters as object) });
  }
  return {
    get: (name) => entries.get(name)?.tool,
    list: () => [...entries.values()].map((entry) => entry.tool),
    async invoke(name, input, context) {
      const entry = entries.get(name);
      if (!entry) return { error: `unknown tool: ${name}` };
      if (!entry.validate(input)) {
        return { error: `invalid input for ${name}: ${ajv.errorsText(entry.validate.errors, { dataVar: 'input' })}` };
      }
      return execute(entry.tool, input as Record<string, unknown>, context);
    },
  };
}

async function execute(tool: ToolDefinition, input: Record<string, unknown>, context: ToolContext): Promise<ToolOutcome> {
  try {
    const output = await untilAborted(tool.execute(input, context), context.signal);
    // As stored and as replayed: an output JSON cannot carry (a BigInt, a cycle) is the tool's error.
    return { output: JSON.parse(JSON.stringify(output ?? null)) };
  } catch (error) {
    if (context.signal.aborted) throw context.signal.reason;
    return { error: error instanceof Error ? error.message : String(error) };
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
