import type { Command } from 'commander';
import type { ApiKeyCreate } from '../../types.ts';
import { pretty, table } from '../output.ts';

type Scope = NonNullable<ApiKeyCreate['scopes']>[number];
import type { CommandContext } from '../context.ts';

/** agentgate keys ls|create|rotate|revoke */
export function addKeyCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal } = context;
  const keys = sub(program, 'keys', 'API keys of the signed-in account');
  sub(keys, 'ls', 'list keys (never their secrets)')
    .action(async () => {
      const list = await (await client()).auth.keys.list({ signal });
      print(list, () => table(list.api_keys, ['id', 'name', 'prefix', 'scopes', 'last_used_at', 'expires_at']));
    });
  sub(keys, 'create', 'create a key; its secret is shown this once').requiredOption('--name <name>', 'what it is for')
    .option('--scopes <list>', 'comma-separated scopes (default: the server\'s)')
    .action(async (options: { name: string; scopes?: string }) => {
      const created = await (await client()).auth.keys.create({ name: options.name, ...(options.scopes ? { scopes: options.scopes.split(',').map((scope) => scope.trim()) as Scope[] } : {}) }, { signal });
      print(created, () => pretty(created));
    });
  sub(keys, 'rotate', 'replace a key\'s secret').argument('<id>')
    .action(async (id: string) => {
      const rotated = await (await client()).auth.keys.rotate(id, { signal });
      print(rotated, () => pretty(rotated));
    });
  sub(keys, 'revoke', 'revoke a key').argument('<id>')
    .action(async (id: string) => {
      const answer = await (await client()).auth.keys.revoke(id, { signal });
      print(answer, () => `revoked ${id}`);
    });
}
