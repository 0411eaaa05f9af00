import type { Command } from 'commander';
import { eventText } from '../../events.ts';
import { integer } from '../arguments.ts';
import { shortStatus, table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate tasks ls|get|events|cancel|pause|resume */
export function addTaskCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal, flags, io, paint } = context;
  const tasks = sub(program, 'tasks', 'list, inspect and control tasks');
  sub(tasks, 'ls', 'list tasks, newest first')
    .option('--status <status>', 'only this status (QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT)')
    .option('--session <id>', 'only this session')
    .option('--limit <n>', 'how many (1-100)', integer('--limit'))
    .option('--offset <n>', 'skip this many', integer('--offset'))
    .action(async (options: { status?: string; session?: string; limit?: number; offset?: number }) => {
      const list = await (await client()).tasks.list({ status: options.status, session_id: options.session, limit: options.limit, offset: options.offset }, { signal });
      print(list, () => table(list.tasks.map((task) => ({ ...task, status: shortStatus(task.status) })), ['task_id', 'status', 'mode', 'created_at', 'query']));
    });
  sub(tasks, 'get', 'a task\'s status and result').argument('<id>')
    .action(async (id: string) => {
      const task = await (await client()).tasks.get(id, { signal });
      print(task, () => [
        `${paint()('bold', task.task_id)}  ${shortStatus(task.status)}  ${task.mode ?? ''}`,
        `query:   ${task.query}`, `session: ${task.session_id}`, ...(task.error ? [`error:   ${task.error}`] : []),
        ...(task.result ? ['', task.result] : []),
      ].join('\n'));
    });
  sub(tasks, 'events', 'a task\'s events; --follow streams them live until the task ends').argument('<id>')
    .option('--follow', 'stream new events as they happen (resumes on its own)')
    .option('--partial', 'include streamed text deltas in the history')
    .action(async (id: string, options: { follow?: boolean; partial?: boolean }) => {
      const api = await client();
      const events = options.follow ? api.tasks.stream(id, { signal }) : (await api.tasks.allEvents(id, { include_partial: options.partial === true }, { signal }));
      const collected = [];
      for await (const event of events) {
        if (flags().json) {
          if (options.follow) io.out.write(`${JSON.stringify(event)}\n`);
          else collected.push(event);
        } else {
          io.out.write(`${String(event.seq).padStart(4)}  ${event.timestamp}  ${event.type.padEnd(20)} ${event.agent_id ?? '-'}  ${eventText(event).replace(/\s+/g, ' ').slice(0, 100)}\n`);
        }
      }
      if (flags().json && !options.follow) io.out.write(`${JSON.stringify(collected, null, 2)}\n`);
    });
  for (const action of ['cancel', 'pause', 'resume'] as const) {
    sub(tasks, action, `${action} a task`).argument('<id>').option('--reason <text>', 'why (recorded with the task)')
      .action(async (id: string, options: { reason?: string }) => {
        const answer = await (await client()).tasks[action](id, options.reason, { signal });
        print(answer, () => answer.message ?? `${action}: ok`);
      });
  }
}
