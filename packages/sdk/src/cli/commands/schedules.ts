import type { Command } from 'commander';
import { pretty, table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate schedules ls|get|create|runs|pause|resume|rm */
export function addScheduleCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal } = context;
  const schedules = sub(program, 'schedules', 'scheduled tasks');
  sub(schedules, 'ls', 'list schedules')
    .action(async () => {
      const list = await (await client()).schedules.list({}, { signal });
      print(list, () => table(list.schedules, ['schedule_id', 'name', 'cron_expression', 'status', 'next_run_at']));
    });
  sub(schedules, 'get', 'one schedule').argument('<id>')
    .action(async (id: string) => {
      const schedule = await (await client()).schedules.get(id, { signal });
      print(schedule, () => pretty(schedule));
    });
  sub(schedules, 'create', 'create a schedule')
    .requiredOption('--name <name>', 'its name').requiredOption('--cron <expression>', 'cron expression, e.g. "0 9 * * 1"')
    .requiredOption('--query <query>', 'the task to run').option('--timezone <tz>', 'IANA time zone (default UTC)')
    .action(async (options: { name: string; cron: string; query: string; timezone?: string }) => {
      const created = await (await client()).schedules.create({ name: options.name, cron_expression: options.cron, task_query: options.query, ...(options.timezone ? { timezone: options.timezone } : {}) }, { signal });
      print(created, () => pretty(created));
    });
  sub(schedules, 'runs', 'past runs of a schedule').argument('<id>')
    .action(async (id: string) => {
      const runs = await (await client()).schedules.runs(id, {}, { signal });
      print(runs, () => pretty(runs));
    });
  for (const action of ['pause', 'resume'] as const) {
    sub(schedules, action, `${action} a schedule`).argument('<id>')
      .action(async (id: string) => {
        const answer = await (await client()).schedules[action](id, undefined, { signal });
        print(answer, () => `${action}d ${id}`);
      });
  }
  sub(schedules, 'rm', 'delete a schedule').argument('<id>')
    .action(async (id: string) => {
      const answer = await (await client()).schedules.delete(id, { signal });
      print(answer, () => `deleted ${id}`);
    });
}
