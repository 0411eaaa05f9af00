import type { Command } from 'commander';
import { pretty, table } from '../output.ts';
import type { CommandContext } from '../context.ts';

/** agentgate approvals ls|approve|deny and agentgate review get|feedback|approve */
export function addApprovalCommands(program: Command, context: CommandContext): void {
  const { client, print, sub, signal } = context;
  const approvals = sub(program, 'approvals', 'tool calls waiting for a person\'s decision');
  sub(approvals, 'ls', 'list approvals').option('--status <status>', 'pending (default), approved, denied, expired or all')
    .action(async (options: { status?: string }) => {
      const list = await (await client()).approvals.list({ ...(options.status ? { status: options.status as 'pending' } : {}) }, { signal });
      print(list, () => table(list.approvals, ['approval_id', 'workflow_id', 'status', 'tools', 'created_at']));
    });
  for (const decision of ['approve', 'deny'] as const) {
    sub(approvals, decision, `${decision} a pending tool call`).argument('<workflow-id>').argument('<approval-id>').option('--feedback <text>', 'a note for the agent')
      .action(async (workflowId: string, approvalId: string, options: { feedback?: string }) => {
        const answer = await (await client()).approvals[decision](workflowId, approvalId, options.feedback, { signal });
        print(answer, () => `${decision === 'approve' ? 'approved' : 'denied'} ${approvalId}`);
      });
  }

  const review = sub(program, 'review', 'the research-plan review of a task');
  sub(review, 'get', 'the current plan and rounds').argument('<task-id>')
    .action(async (taskId: string) => {
      const state = await (await client()).reviews.get(taskId, { signal });
      print(state, () => pretty(state));
    });
  sub(review, 'feedback', 'send feedback on the plan').argument('<task-id>').argument('<message>')
    .action(async (taskId: string, message: string) => {
      const answer = await (await client()).reviews.feedback(taskId, message, { signal });
      print(answer, () => pretty(answer));
    });
  sub(review, 'approve', 'approve the plan; the research starts').argument('<task-id>')
    .action(async (taskId: string) => {
      const answer = await (await client()).reviews.approve(taskId, { signal });
      print(answer, () => pretty(answer));
    });
}
