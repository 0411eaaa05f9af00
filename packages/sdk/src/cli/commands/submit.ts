import { Option, type Command } from 'commander';
import type { TaskSubmission } from '../../types.ts';
import { integer, jsonObject } from '../arguments.ts';
import type { CommandContext } from '../context.ts';
import { EXIT } from '../exit-codes.ts';
import { shortStatus } from '../output.ts';
import { followAndRender } from '../render.ts';

interface SubmitFlags {
  mode?: TaskSubmission['mode'];
  strategy?: TaskSubmission['research_strategy'];
  role?: string;
  session?: string;
  budget?: number;
  context?: Record<string, unknown>;
  stream?: boolean;
  wait?: boolean;
}

/** agentgate submit "<query>" [--stream | --wait] */
export function addSubmitCommand(program: Command, context: CommandContext): void {
  context.sub(program, 'submit', 'submit a task; with --stream, follow it live and print the answer')
    .argument('<query>', 'what to do')
    .addOption(new Option('--mode <mode>', 'execution mode').choices(['simple', 'standard', 'complex', 'supervisor']))
    .addOption(new Option('--strategy <strategy>', 'research strategy').choices(['quick', 'standard', 'deep', 'academic']))
    .option('--role <role>', 'role preset (context.role)')
    .option('--session <id>', 'session to continue (UUID or your own id)')
    .option('--budget <tokens>', 'token budget of the task', integer('--budget'))
    .option('--context <json>', 'more context keys, as a JSON object', jsonObject)
    .option('--stream', 'follow the task: live agent tree and streaming answer; exit code by its outcome')
    .option('--wait', 'wait for the end quietly, then print the answer; exit code by its outcome')
    .action((query: string, flags: SubmitFlags) => submit(context, query, flags));
}

function submissionOf(query: string, flags: SubmitFlags): TaskSubmission {
  const taskContext = { ...flags.context, ...(flags.role ? { role: flags.role } : {}), ...(flags.budget ? { token_budget: flags.budget } : {}) };
  return {
    query, ...(flags.mode ? { mode: flags.mode } : {}), ...(flags.strategy ? { research_strategy: flags.strategy } : {}),
    ...(flags.session ? { session_id: flags.session } : {}), ...(Object.keys(taskContext).length ? { context: taskContext } : {}),
  };
}

async function submit(context: CommandContext, query: string, flags: SubmitFlags): Promise<void> {
  const { io, signal, print, setExitCode } = context;
  const client = await context.client();
  const json = context.flags().json === true;
  const submitted = await client.tasks.submit(submissionOf(query, flags), { signal });
  if (flags.stream) {
    if (!json) io.err.write(`task ${submitted.task_id} (session ${submitted.session_id})\n`);
    const { task } = await followAndRender(client, submitted.task_id, { out: io.out, err: io.err, json, color: context.flags().color !== false, signal });
    setExitCode(task.status === 'TASK_STATUS_COMPLETED' ? EXIT.ok : EXIT.failed);
  } else if (flags.wait) {
    const { task } = await client.tasks.wait(submitted.task_id, { signal });
    print(task, () => task.result || `task ${task.task_id} ${shortStatus(task.status)}${task.error ? `: ${task.error}` : ''}`);
    setExitCode(task.status === 'TASK_STATUS_COMPLETED' ? EXIT.ok : EXIT.failed);
  } else {
    print(submitted, () => `${submitted.task_id}\t(session ${submitted.session_id})`);
  }
}
