import { existsSync, readFileSync } from 'node:fs';
import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';

const ServerBase = {
  /** Prefix of the server's tools in the registry (`<name>__<tool>`). */
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9_-]{0,30}$' }),
  /** Each call gives up after this long. */
  timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 600_000 })),
  /** Its tools may change the world outside the task (the default): approval policies and the tools API treat them so. */
  dangerous: Type.Optional(Type.Boolean()),
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
  return data.servers;
}
