import type { Db } from '../../../db/database.ts';
import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import type { ModelTextResult } from '../../../llm/stream-model-text.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import { readControl, type ControlFlags } from '../../runtime/checkpoint.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { applyLeadActions } from './lead-actions.ts';
import { LeadDecisionSchema, type LeadDecision } from './swarm-answers.ts';
import { askSwarmModel } from './swarm-call.ts';
import { LEAD_AGENT_ID, swarmMock } from './swarm-events.ts';
import { leadPrompt, snippetOf } from './swarm-prompts.ts';
import { LEAD_FILE_READS, listSessionFiles, pathsToRead, readSessionFiles, type LeadFile } from './lead-files.ts';
import { insertTurn, LEAD, markRead, readAgents, readInbox, readTasks, readTurn, readWorkspace, type SwarmAgent } from './swarm-queries.ts';
import { tokensUsed } from './swarm-findings.ts';
import { SWARM_ROLES } from './swarm-roles.ts';

/** What the round goes on with after the lead's step. */
export interface LeadOutcome {
  /** Model calls the lead made (0 when nothing woke it; more than 1 when it read files before deciding). */
  calls: number;
  done: boolean;
  /** The lead's own reply, when it closed the swarm with one. */
  reply?: AgentAnswer;
  /** The agents that take a turn next round. */
  active: string[];
  /** Every agent the swarm has had. */
  agents: number;
  /** Tokens of the task's model calls so far (spec 8: max_total_tokens). */
  tokens: number;
  /** When the step ran: the wall-clock limit is checked against it, so a replay decides the same. */
  nowMs: number;
  /** Pause and cancel as the step ended: the next round's checkpoint honours them without a read of its own. */
  control: ControlFlags;
}

interface Wake {
  round: number;
  /** Agents that went idle or failed this round. */
  events: string[];
  /** Model calls the swarm may still make before max_total_llm_calls, the synthesis's kept aside. */
  callsLeft: number;
}

/**
 * The lead's step of a round (`swarm:lead:<n>`; round 0 plans), which the round runs only when something woke the lead
 * (run-swarm.ts): an agent went idle, failed or timed out, a message waits for it (a human's or an agent's), or every
 * `leadCheckpointRounds` rounds; should nothing be left to read by then, the step reads the team and returns. The
 * decision and every action's effect commit with the call's usage, recorded as the lead's turn of the round, so a
 * re-run after a crash that finds it recorded does not ask again. The step ends by reading pause and cancel.
 */
export function decide(deps: Deps, task: TaskSnapshot, wake: Wake): Promise<LeadOutcome> {
  return runTaskStep(deps, `swarm:lead:${wake.round}`, () => withCancelWatch(deps, task.id, async (cancel) => {
    const outcome = await leadDecides(deps, task, wake, cancel);
    return { ...outcome, control: await readControl(deps, task.id) };
  }));
}

async function leadDecides(deps: Deps, task: TaskSnapshot, wake: Wake, cancel: AbortSignal): Promise<Omit<LeadOutcome, 'control'>> {
  const { round } = wake;
  const [agents, inbox, recorded] = await Promise.all([
    readAgents(deps.db, task.id), readInbox(deps.db, task.id, LEAD, round), readTurn(deps.db, task.id, LEAD, round),
  ]);
  const tokens = await tokensUsed(deps.db, task.id);
  if (recorded) return outcomeOf(agents, tokens, recorded.action as LeadDecision, { ...(recorded.answered_by as ModelTextResult), text: '' }, 1);
  const wokenBy = [...wake.events, ...(inbox.length > 0 ? ['message'] : []), ...(round > 0 && round % deps.config.swarm.leadCheckpointRounds === 0 ? ['checkpoint'] : [])];
  if (round > 0 && wokenBy.length === 0) return outcomeOf(agents, tokens, undefined, undefined, 0);
  const [tasks, workspace, sessionFiles] = await Promise.all([
    readTasks(deps.db, task.id), readWorkspace(deps.db, task.id, deps.config.swarm.workspaceMaxEntries), listSessionFiles(deps, task),
  ]);
  const humanMessages = inbox.filter((message) => message.sender === 'user').map((message) => message.body);
  const reading: Reading = { round, wokenBy, humanMessages, inboxIds: inbox.map((message) => message.id) };
  const view = {
    query: task.query, round, wokenBy: round === 0 ? ['start'] : wokenBy, tasks,
    agents: agents.map(({ name, role, status, assignment, findings, error }) => ({ name, role, status, assignment, findings, error })),
    humanMessages, inbox: inbox.filter((message) => message.sender !== 'user').map(({ sender, body }) => ({ sender, body })),
    workspace: workspace.map((entry) => snippetOf(entry, deps.config.swarm.workspaceSnippetChars)),
    sessionFiles, filesRead: [] as LeadFile[],
    roles: [...SWARM_ROLES], maxAgents: deps.config.swarm.maxAgents,
  };
  // file_read: the lead reads and decides again with the files, while reads and the swarm's model calls are left.
  const readsLeft = Math.min(LEAD_FILE_READS.reads, wake.callsLeft - 1);
  for (let read = 0; ; read++) {
    const outcome = await askSwarmModel(deps, task, {
      agentId: LEAD_AGENT_ID, stepKey: read === 0 ? `swarm:lead:${round}` : `swarm:lead:${round}:read${read}`, tier: 'medium', schema: LeadDecisionSchema,
      mock: swarmMock(task.context, 'swarm-lead'),
      opening: round === 0 && read === 0 ? [{ type: 'PROGRESS', agentId: LEAD_AGENT_ID, message: 'Planning the swarm', payload: { stage: 'planning' }, dedupeKey: 'swarm:planning' }] : [],
      prompt: leadPrompt({ ...view, readsLeft: readsLeft - read }),
      prepare: async () => undefined,
      effect: async (transaction, answer, result): Promise<{ events: NewTaskEvent[]; result: LeadStep }> => {
        const decision: LeadDecision = answer.ok ? answer.value : { reasoning: `the lead's answer was not a decision (${answer.problem}): nothing changes`, actions: [{ type: 'noop' }] };
        const paths = read < readsLeft ? pathsToRead(decision) : [];
        if (paths.length > 0) return { events: [leadFileRead(round, read, decision, paths)], result: { paths } };
        return { events: await recordDecision(deps, task, transaction, reading, decision, result), result: { decision } };
      },
    }, cancel);
    if ('budgetExhausted' in outcome) throw new Error('the swarm\'s budget is spent');
    const { applied } = outcome;
    if ('paths' in applied) {
      view.filesRead.push(...await readSessionFiles(deps, task, applied.paths));
      continue;
    }
    return outcomeOf(await readAgents(deps.db, task.id), await tokensUsed(deps.db, task.id), applied.decision, outcome.result, read + 1);
  }
}

/** What one of the lead's calls came to: files to read before deciding, or the decision. */
type LeadStep = { paths: string[] } | { decision: LeadDecision };

/** LEAD_TOOL_CALL (reference §1.10): the lead reads files of the session workspace before it decides. */
const leadFileRead = (round: number, read: number, decision: LeadDecision, paths: string[]): NewTaskEvent => ({
  type: 'LEAD_TOOL_CALL', agentId: LEAD_AGENT_ID, message: `The lead reads ${paths.join(', ')}`,
  payload: { tool: 'file_read', paths, round, reasoning: decision.reasoning.slice(0, 2000) }, dedupeKey: `swarm:lead:${round}:read${read}`,
});

interface Reading {
  round: number;
  wokenBy: string[];
  humanMessages: string[];
  inboxIds: string[];
}

async function recordDecision(deps: Deps, task: TaskSnapshot, transaction: Db, reading: Reading, decision: LeadDecision, result: ModelTextResult): Promise<NewTaskEvent[]> {
  const { round } = reading;
  const applied = await applyLeadActions(deps, task, transaction, round, decision.actions);
  await markRead(transaction, task.id, reading.inboxIds, round);
  const answeredBy = { model: result.model, provider: result.provider, inputTokens: result.inputTokens, outputTokens: result.outputTokens, costUsd: result.costUsd, attempts: result.attempts };
  await insertTurn(transaction, task.id, { agent: LEAD, round, action: decision, result: applied.refused.join('; '), answeredBy });
  const stepKey = `swarm:lead:${round}`;
  return [
    {
      type: 'LEAD_DECISION', agentId: LEAD_AGENT_ID, message: decision.reasoning.slice(0, 4000),
      payload: {
        round, woken_by: reading.wokenBy, actions: decision.actions, ...(applied.refused.length > 0 ? { refused: applied.refused } : {}),
        ...(reading.humanMessages.length > 0 ? { human_messages: reading.humanMessages } : {}),
      },
      dedupeKey: `${stepKey}:decision`,
    },
    ...applied.events.map((event, index) => ({ ...event, dedupeKey: `${stepKey}:${index}` })),
    ...(applied.refused.length === 0 ? [] : [{
      type: 'WARNING', agentId: LEAD_AGENT_ID, message: `The swarm refused: ${applied.refused.join('; ')}`.slice(0, 4000),
      payload: { refused: applied.refused }, dedupeKey: `${stepKey}:refused`,
    }]),
  ];
}

function outcomeOf(agents: SwarmAgent[], tokens: number, decision: LeadDecision | undefined, result: ModelTextResult | undefined, calls: number): Omit<LeadOutcome, 'control'> {
  const done = decision?.actions.some((action) => action.type === 'done') ?? false;
  const replyText = decision?.actions.find((action) => action.type === 'done' && action.reply?.trim())?.reply?.trim();
  return {
    calls, done, tokens, active: agents.filter((agent) => agent.status === 'active').map((agent) => agent.name), agents: agents.length, nowMs: Date.now(),
    ...(replyText && result ? { reply: { ...result, text: replyText, agentId: LEAD_AGENT_ID } } : {}),
  };
}
