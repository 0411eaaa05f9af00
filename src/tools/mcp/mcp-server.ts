import type { JSONSchema7 } from '@ai-sdk/provider';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import pRetry from 'p-retry';
import type { Logger } from 'pino';
import type { ToolDefinition } from '../registry.ts';
import { cappedFetch } from './capped-fetch.ts';
import { enabledTenants, type McpServerSpec } from './mcp-config.ts';

const DEFAULT_TIMEOUT_MS = 30_000;
const CONNECT_TIMEOUT_MS = 10_000;
const MAX_NAME_LENGTH = 64;

export interface McpServer {
  /** The server's tools as registry tools; empty while it has never answered. */
  tools(): ToolDefinition[];
  close(): Promise<void>;
}

/**
 * One configured MCP server: connected at start, its tools listed and offered as `<server>__<tool>`. A server
 * that fails to start, or dies later, is reported and connected again in the background (backing off to a
 * minute); meanwhile its calls fail at once with the reason. Every call has a time limit and follows the
 * task's cancel signal, so a server never hangs a task.
 */
export function openMcpServer(spec: McpServerSpec, logger: Logger, maxAnswerBytes: number): McpServer {
  const log = logger.child({ mcp_server: spec.name });
  let client: Client | undefined;
  let tools: ToolDefinition[] = [];
  let lastError = 'not connected yet';
  let closed = false;
  const reconnect = new AbortController();
  const tenants = enabledTenants(spec);
  if (tenants?.size === 0) log.warn('MCP server names no tenants: its tools are offered to none (list tenant ids, or \'*\' for all, under tenants)');
  const connection = () => ({ client, lastError });

  const connect = async () => {
    const next = new Client({ name: 'agentgate', version: '1' });
    next.onclose = () => {
      if (client !== next) return;
      client = undefined;
      lastError = 'the server closed the connection';
      if (!closed) {
        log.warn('MCP server disconnected; reconnecting');
        void keepConnecting();
      }
    };
    next.onerror = (error) => log.warn({ err: error }, 'MCP server connection error');
    const transport = transportOf(spec, maxAnswerBytes);
    // A stdio server's stderr is read (into the debug log): a pipe nobody drains would block the server once full.
    if (transport instanceof StdioClientTransport) transport.stderr?.on('data', (chunk: Buffer) => log.debug({ stderr: chunk.toString().slice(0, 2000) }, 'MCP server stderr'));
    let listed;
    try {
      await next.connect(transport, { timeout: CONNECT_TIMEOUT_MS });
      listed = await next.listTools(undefined, { timeout: CONNECT_TIMEOUT_MS });
    } catch (error) {
      // A failed attempt's connection is closed before the next: left open, each retry would leave a server running.
      await next.close().catch(() => {});
      throw error;
    }
    tools = listed.tools.map((tool) => toRegistryTool(spec, tool, connection, tenants));
    client = next;
    log.info({ tools: tools.map((tool) => tool.name) }, 'MCP server connected');
  };

  const keepConnecting = () => pRetry(connect, {
    retries: Infinity, minTimeout: 1000, maxTimeout: 60_000, signal: reconnect.signal,
    onFailedAttempt: ({ error, attemptNumber }) => {
      lastError = error.message;
      if (attemptNumber === 1 || attemptNumber % 10 === 0) log.warn({ err: error, attempt: attemptNumber }, 'MCP server unavailable; retrying');
    },
  }).catch(() => {});

  void keepConnecting();
  return {
    tools: () => tools,
    async close() {
      closed = true;
      reconnect.abort();
      await client?.close().catch(() => {});
    },
  };
}

function transportOf(spec: McpServerSpec, maxAnswerBytes: number): Transport {
  if (spec.transport === 'http') {
    return new StreamableHTTPClientTransport(new URL(spec.url), { requestInit: { headers: spec.headers }, fetch: cappedFetch(spec.name, maxAnswerBytes) });
  }
  // The child gets only what it is given: no server secrets through the environment.
  return new StdioClientTransport({ command: spec.command, args: spec.args, env: { PATH: process.env.PATH ?? '', ...spec.env }, stderr: 'pipe' });
}

interface ListedTool {
  name: string;
  description?: string;
  inputSchema: Record<string, unknown>;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean };
}

function toRegistryTool(
  spec: McpServerSpec, tool: ListedTool, connection: () => { client?: Client; lastError: string }, tenants: ReadonlySet<string> | undefined,
): ToolDefinition {
  return {
    name: `${spec.name}__${tool.name}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, MAX_NAME_LENGTH),
    description: tool.description ?? `${tool.name} (MCP server ${spec.name})`,
    parameters: tool.inputSchema as JSONSchema7,
    category: 'mcp',
    costPerUseUsd: 0,
    dangerous: spec.dangerous ?? true,
    // MCP's hints default to a tool that writes and is not idempotent: unless it says otherwise, at most once.
    effects: tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true ? 'none' : 'external',
    tenants,
    async execute(input, context) {
      const { client, lastError } = connection();
      if (!client) throw new Error(`MCP server ${spec.name} is unavailable: ${lastError}`);
      const result = await client.callTool({ name: tool.name, arguments: input }, undefined, {
        timeout: spec.timeout_ms ?? DEFAULT_TIMEOUT_MS, signal: context.signal,
      });
      const text = (result.content as Array<{ type: string; text?: string }> | undefined ?? [])
        .filter((part) => part.type === 'text').map((part) => part.text).join('\n');
      if (result.isError) throw new Error(text || `${tool.name} failed`);
      return result.structuredContent ?? text;
    },
  };
}
