import type { Command } from 'commander';
import { jsonObject } from '../arguments.ts';
import { pretty, table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate tools ls|get|run and agentgate health */
export function addToolCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal } = context;
  const tools = sub(program, 'tools', 'the tool catalogue');
  sub(tools, 'ls', 'list tools').option('--category <name>', 'only this category')
    .action(async (options: { category?: string }) => {
      const list = await (await client()).tools.list({ ...(options.category ? { category: options.category } : {}) }, { signal });
      print(list, () => table(list.tools, ['name', 'category', 'description']));
    });
  sub(tools, 'get', 'one tool and its parameters').argument('<name>')
    .action(async (name: string) => {
      const tool = await (await client()).tools.get(name, { signal });
      print(tool, () => pretty(tool));
    });
  sub(tools, 'run', 'run a tool directly').argument('<name>').option('--args <json>', 'its arguments, a JSON object', jsonObject)
    .action(async (name: string, options: { args?: Record<string, unknown> }) => {
      const result = await (await client()).tools.execute(name, { arguments: options.args ?? {} }, { signal });
      print(result, () => pretty(result));
    });

  sub(program, 'health', 'the gateway\'s liveness and readiness')
    .action(async () => {
      const api = await client();
      const [health, readiness] = await Promise.all([api.probes.health({ signal }), api.probes.readiness({ signal })]);
      print({ health, readiness }, () => `health: ${pretty(health)}\nreadiness: ${pretty(readiness)}`);
    });
}
