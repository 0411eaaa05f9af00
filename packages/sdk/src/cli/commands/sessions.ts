import type { Command } from 'commander';
import { integer } from '../arguments.ts';
import { pretty, table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate sessions ls|get|history|rename|rm */
export function addSessionCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal } = context;
  const sessions = sub(program, 'sessions', 'list and inspect sessions');
  sub(sessions, 'ls', 'list sessions').option('--limit <n>', 'how many', integer('--limit')).option('--offset <n>', 'skip this many', integer('--offset'))
    .action(async (options: { limit?: number; offset?: number }) => {
      const list = await (await client()).sessions.list({ limit: options.limit, offset: options.offset }, { signal });
      print(list, () => table(list.sessions, ['session_id', 'title', 'task_count', 'tokens_used', 'updated_at']));
    });
  sub(sessions, 'get', 'one session').argument('<id>')
    .action(async (id: string) => {
      const session = await (await client()).sessions.get(id, { signal });
      print(session, () => pretty(session));
    });
  sub(sessions, 'history', 'the tasks of a session, oldest first').argument('<id>').option('--limit <n>', 'how many', integer('--limit'))
    .action(async (id: string, options: { limit?: number }) => {
      const history = await (await client()).sessions.history(id, { limit: options.limit }, { signal });
      print(history, () => pretty(history));
    });
  sub(sessions, 'rename', 'set a session\'s title').argument('<id>').argument('<title>')
    .action(async (id: string, title: string) => {
      const session = await (await client()).sessions.rename(id, title, { signal });
      print(session, () => `renamed ${id}`);
    });
  sub(sessions, 'rm', 'delete a session').argument('<id>')
    .action(async (id: string) => {
      await (await client()).sessions.delete(id, { signal });
      print({ deleted: id }, () => `deleted ${id}`);
    });
}
