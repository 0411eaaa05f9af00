import { existsSync, readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';
import { isUuid } from '../../uuid.ts';

const ServerBase = {
  /** Prefix of the server's tools in the registry (`<name>__<tool>`). */
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,30}$' }),
  /** Each call gives up after this long. */
  timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  /** Its tools may change the world outside the task (the default): approval policies and the tools API treat them so. */
  dangerous: Type.Optional(Type.Boolean()),
  /**
   * The tenants (ids) whose callers and agents may use its tools, or `'*'` for every tenant. A server that names none
   * is enabled for none: its calls run on the gateway's credentials, so each tenant is let in on purpose.
   */
  tenants: Type.Optional(Type.Array(Type.String({ minLength: 1 }), { maxItems: 10_000 })),
};

const StdioServer = Type.Object({
  ...ServerBase,
  transport: Type.Literal('stdio'),
  command: Type.String({ minLength: 1 }),
  args: Type.Optional(Type.Array(Type.String())),
  env: Type.Optional(Type.Record(Type.String(), Type.String())),
}, { additionalProperties: false });

const HttpServer = Type.Object({
  ...ServerBase,
  transport: Type.Literal('http'),
  url: Type.String({ pattern: '^https?://' }),
  headers: Type.Optional(Type.Record(Type.String(), Type.String())),
}, { additionalProperties: false });

const McpFile = Type.Object({ servers: Type.Array(Type.Union([StdioServer, HttpServer])) }, { additionalProperties: false });

export type McpServerSpec = Static<typeof StdioServer> | Static<typeof HttpServer>;

/** The MCP servers of `config/mcp.yaml` (MCP_CONFIG); no file means none. An invalid file stops start-up. */
export function loadMcpConfig(file: string): McpServerSpec[] {
  if (!existsSync(file)) return [];
  const data = parse(readFileSync(file, 'utf8')) as unknown;
  if (!Value.Check(McpFile, data)) {
    const problems = [...Value.Errors(McpFile, data)].slice(0, 10).map((problem) => `${problem.instancePath || '/'}: ${problem.message}`);
    throw new Error(`invalid MCP config ${file}:\n  ${problems.join('\n  ')}`);
  }
  const names = data.servers.map((server) => server.name);
  const repeated = names.find((name, index) => names.indexOf(name) !== index);
  if (repeated) throw new Error(`invalid MCP config ${file}: server ${repeated} is named twice`);
  for (const server of data.servers) {
    // Ids, not slugs: a tenant cannot rename itself into a list, and an id names one tenant for good.
    const wrong = server.tenants?.find((tenant) => tenant !== '*' && !isUuid(tenant));
    if (wrong !== undefined) throw new Error(`invalid MCP config ${file}: server ${server.name}: tenants are tenant ids (UUIDs) or '*', not ${JSON.stringify(wrong)}`);
  }
  return data.servers;
}

/** The tenants that may use a server's tools (ToolDefinition.tenants): undefined for every tenant. */
export function enabledTenants(spec: McpServerSpec): ReadonlySet<string> | undefined {
  const tenants = spec.tenants ?? [];
  return tenants.includes('*') ? undefined : new Set(tenants.map((tenant) => tenant.toLowerCase()));
}
