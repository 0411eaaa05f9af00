import type { JSONSchema7 } from '@ai-sdk/provider';
import type { ErrorObject } from 'ajv';
import type { Config } from '../config.ts';
import type { Db } from '../db/database.ts';

/** What a tool may know of the call it serves, and what it may use to serve it. */
export interface ToolContext {
  /** Null for a call through the tools API, outside any task. */
  taskId: string | null;
  /** The session whose workspace file tools work in; null when the call has none. */
  sessionId: string | null;
  tenantId: string;
  userId: string;
  /** Aborted when the task is cancelled or runs out of time (or the API request ends). */
  signal: AbortSignal;
  /** For the session workspace's tables (file tools, the Python sandbox's snapshot, browser screenshots). */
  db: Db;
  /** The settings tools read (toolSettingsOf), not the deployment's whole configuration. */
  settings: Readonly<ToolSettings>;
  /**
   * For a task's call: records the call as done, with the output it returns, in the caller's transaction. A tool
   * whose effects are `database` calls it in the transaction that makes its change, so that the change and the
   * record commit together and a re-run after a crash replays the record instead of changing anything again.
   * Absent outside a task (the tools API).
   */
  recordCall?: (transaction: Db, output: unknown) => Promise<void>;
}

/** The parts of the configuration tools read: the network guard, parsing limits, search, the workspace quota, the sandboxes. */
export type ToolSettings = Pick<Config, 'network' | 'parse' | 'webSearch' | 'workspace' | 'python' | 'browser' | 'bash' | 'news' | 'vendors'>;

export function toolSettingsOf(config: Readonly<Config>): Readonly<ToolSettings> {
  const { network, parse, webSearch, workspace, python, browser, bash, news, vendors } = config;
  return { network, parse, webSearch, workspace, python, browser, bash, news, vendors };
}

/**
 * What running a call a second time would do, which decides how a task re-run after a crash treats a call whose
 * outcome was not recorded (docs/decisions.md, issue 26):
 * - `none`: it only reads or computes; it simply runs again.
 * - `database`: it changes our database, and records its call (`ToolContext.recordCall`) in the same transaction.
 * - `external`: it may change something outside our database; it runs at most once, and a re-run that cannot
 *   know whether it ran answers that its outcome is unknown.
 */
export type ToolEffects = 'none' | 'database' | 'external';

/**
 * A tool an agent can call (issue 14, scope 5). The parameters are a JSON schema the model sees and the
 * registry validates every call against before `execute` runs; the output must be JSON-serializable.
 */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: JSONSchema7;
  category: string;
  /** Charged per call on top of model usage (USD). */
  costPerUseUsd: number;
  /** Calls that can change the world outside the task (files, shells, code) may need a human's approval. */
  dangerous: boolean;
  effects: ToolEffects;
  /**
   * Offered to an agent only when its role's preset names it, never as part of a preset of `all`: a single-purpose
   * agent's tool (config/agents), which a general agent has no use for, or a vendor's that needs its own key.
   */
  namedOnly?: boolean;
  /** The tenants that may use it (an MCP server's, as configured); absent: every tenant, as for the built-in tools. */
  tenants?: ReadonlySet<string>;
  execute(input: Record<string, unknown>, context: ToolContext): Promise<unknown>;
}

/** How one call went: the tool's output, or why there is none (an unknown tool, an invalid input, a failure). */
export type ToolOutcome = { output: unknown; error?: undefined } | { error: string; output?: undefined };

/**
 * A tool a tenant may not use does not exist for that tenant: it is not listed, not found and not run, and every
 * answer about it is the one for an unknown tool (no one learns what another tenant may use).
 */
export interface ToolRegistry {
  /** The tool of that name, whoever may use it: for what is known about a tool, never for whether a caller may use it. */
  get(name: string): ToolDefinition | undefined;
  /** The tool of that name if the tenant may use it. */
  find(name: string, tenantId: string): ToolDefinition | undefined;
  /** The tools the tenant may use. */
  list(tenantId: string): ToolDefinition[];
  /**
   * Runs a call for `context.tenantId`: a tool the tenant may not use is an unknown tool, and the input is validated
   * against the tool's parameters first. Every failure of the call itself comes back as `error` (for the model to
   * read); only an abort of `context.signal` is thrown.
   */
  invoke(name: string, input: unknown, context: ToolContext): Promise<ToolOutcome>;
  /** The schema errors `invoke` would find in an input, without running the tool (none for an unknown tool). */
  inputErrors(name: string, input: unknown): ErrorObject[];
}
