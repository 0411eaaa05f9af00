import type { Command } from 'commander';
import { AgentgateClient } from '../client.ts';
import { resolveConnection } from './config.ts';
import { colorsFor } from './output.ts';

export interface Io { out: NodeJS.WriteStream; err: NodeJS.WriteStream; env: NodeJS.ProcessEnv }

export interface GlobalFlags { url?: string; apiKey?: string; profile?: string; tenant?: string; json?: boolean; color: boolean }

/** What every command needs: the streams, the global flags, a client, and the one way to print a result. */
export interface CommandContext {
  io: Io;
  /** Aborted by Ctrl-C. */
  signal: AbortSignal;
  flags(): GlobalFlags;
  /** A client for the server and key the flags, environment or profile name. */
  client(): Promise<AgentgateClient>;
  /** Prints a result: JSON with --json, else the human form. */
  print(value: unknown, human: () => string): void;
  paint(): ReturnType<typeof colorsFor>;
  /** A subcommand that reports its errors through `main` (exit codes) and writes to the context's streams. */
  sub(parent: Command, name: string, description: string): Command;
  setExitCode(code: number): void;
}

export function createContext(program: Command, io: Io, signal: AbortSignal, setExitCode: (code: number) => void): CommandContext {
  const flags = () => program.opts<GlobalFlags>();
  return {
    io, signal, flags, setExitCode,
    client: async () => {
      const { url, apiKey, profile, tenant } = flags();
      const connection = await resolveConnection({ url, apiKey, profile, tenant }, io.env);
      return new AgentgateClient({ baseUrl: connection.url, apiKey: connection.apiKey, tenantId: connection.tenantId });
    },
    print: (value, human) => io.out.write(`${flags().json ? JSON.stringify(value, null, 2) : human()}\n`),
    paint: () => colorsFor(io.out, flags().color !== false, io.env),
    sub: (parent, name, description) => parent.command(name).description(description).exitOverride()
      .configureOutput({ writeOut: (text) => io.out.write(text), writeErr: (text) => io.err.write(text) }),
  };
}
