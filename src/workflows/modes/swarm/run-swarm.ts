import type { Deps } from '../../../deps.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { checkpoint, type ControlFlags } from '../../runtime/checkpoint.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import { timePausedMs, type AgentAnswer, type TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { answerFromResults } from '../../team/synthesis.ts';
import { takeTurn, type PlayedTurn } from './agent-turn.ts';
import { decide, type LeadOutcome } from './lead-decision.ts';
import { reserveRound } from './round-reservation.ts';
import { LEAD_AGENT_ID } from './swarm-events.ts';
import { collectFindings, tokensUsed } from './swarm-findings.ts';

export const SWARM_MODE = 'swarm';

/** The swarm could not produce an answer at all: routing falls back to the standard workflow (spec 4.2 rule 8). */
export class SwarmFailedError extends Error {
  override name = 'SwarmFailedError';
}

interface Progress {
  round: number;
  /** Model calls so far, the synthesis not counted. */
  calls: number;
  lead: LeadOutcome;
  /** The agents that take a turn next round. */
  active: string[];
  /** Tokens of the task's calls so far, and when the last step that read them ended (spec 8 limits). */
  tokens: number;
  nowMs: number;
  /** Pause and cancel as the round's last step read them. */
  control: ControlFlags;
}

/**
 * The swarm (context.force_swarm; spec 8, reference §1.10, issue 28): one workflow that advances a team in rounds.
 * The lead plans (round 0); then each round opens with a checkpoint (`swarm_round_<n>`: pause parks the task holding
 * no worker, cancel stops it; it honours what the last step of the round before read, sparing a read step), every active agent takes one turn as a durable step of its own, all started at once
 * in the roster's order so a replay numbers them the same, and the lead decides when something woke it. It closes
 * with the lead's reply or a synthesis of the agents' findings. Limits (spec 8) end it early with what was found.
 */
export async function runSwarmWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const lead = await decide(deps, task, { round: 0, events: [], callsLeft: callsLeft(deps, 0) });
  const progress: Progress = { round: 0, calls: lead.calls, lead, active: lead.active, tokens: lead.tokens, nowMs: lead.nowMs, control: lead.control };
  let stoppedBy: string | undefined;
  while (!progress.lead.done && progress.active.length > 0) {
    stoppedBy = limitReached(deps, task, progress);
    if (stoppedBy) break;
    await playRound(deps, task, progress);
  }
  if (stoppedBy) await announceStop(deps, task, stoppedBy);
  const answer = progress.lead.reply ?? await synthesize(deps, task);
  const totals = await runTaskStep(deps, 'swarm:totals', async () => ({ tokens: await tokensUsed(deps.db, task.id) }));
  return {
    mode: SWARM_MODE, answer, agentsUsed: progress.lead.agents, complexityScore: null,
    metadata: {
      workflow_type: 'swarm', total_agents: progress.lead.agents, total_tokens: totals.tokens, rounds: progress.round,
      ...(stoppedBy ? { stopped_by: stoppedBy } : {}),
    },
  };
}

/**
 * A round: its checkpoint, a turn for every active agent, then the lead's step when something woke it (an agent went
 * idle, failed or timed out, a message waits for it, or every `leadCheckpointRounds` rounds). What decides that is in
 * the turns' recorded outcomes, so a replay runs the same steps; a round that wakes nobody writes no lead step.
 */
async function playRound(deps: Deps, task: TaskSnapshot, progress: Progress): Promise<void> {
  const round = ++progress.round;
  await checkpoint(deps, task, `swarm_round_${round}`, progress.control);
  const reserved = await reserveRound(deps, task, progress.active, round);
  // Every turn's step ends before the round goes on, even when one throws (a cancel, a park for a spent budget).
  const settled = await Promise.allSettled(progress.active.map((name) => takeTurn(deps, task, name, round, reserved[name])));
  const thrown = settled.find((outcome) => outcome.status === 'rejected');
  if (thrown) throw thrown.reason;
  const turns = settled.map((outcome) => (outcome as PromiseFulfilledResult<PlayedTurn>).value);
  progress.calls += turns.reduce((sum, turn) => sum + turn.modelCalls, 0);
  progress.tokens = Math.max(progress.tokens, ...turns.map((turn) => turn.tokens));
  progress.nowMs = Math.max(progress.nowMs, ...turns.map((turn) => turn.endedAtMs));
  progress.control = mergedControl(turns.map((turn) => turn.control));
  const events = turns.filter((turn) => turn.status !== 'active').map(describeEnd);
  const checkpointDue = round % deps.config.swarm.leadCheckpointRounds === 0;
  if (events.length === 0 && !checkpointDue && !turns.some((turn) => turn.leadHasMail)) return;
  progress.lead = await decide(deps, task, { round, events, callsLeft: callsLeft(deps, progress.calls) });
  progress.calls += progress.lead.calls;
  progress.active = progress.lead.active;
  progress.tokens = progress.lead.tokens;
  progress.nowMs = progress.lead.nowMs;
  progress.control = progress.lead.control;
}

/** Model calls left under max_total_llm_calls once `calls` are made, the closing synthesis's kept aside. */
const callsLeft = (deps: Deps, calls: number) => deps.config.swarm.maxTotalLlmCalls - calls - 1;

/** What the round's turns read of pause and cancel, each at its end: a request any of them saw holds. */
const mergedControl = (flags: ControlFlags[]): ControlFlags => ({
  pauseRequested: flags.some((flag) => flag.pauseRequested), cancelRequested: flags.some((flag) => flag.cancelRequested),
});

const describeEnd = (turn: PlayedTurn) => `${turn.agent} ${turn.action === 'timed_out' ? 'timed out' : turn.status === 'idle' ? 'went idle' : turn.status}`;

/**
 * The first swarm limit (spec 8) another round would pass, said plainly; the round is not played. A round may call
 * the model once per active agent and once for the lead, and the synthesis once more.
 */
function limitReached(deps: Deps, task: TaskSnapshot, { calls, active, tokens, nowMs }: Progress): string | undefined {
  const limits = deps.config.swarm;
  if (calls + active.length + 2 > limits.maxTotalLlmCalls) {
    return `max_total_llm_calls (${limits.maxTotalLlmCalls}): ${calls} model calls made, another round could pass the limit`;
  }
  if (tokens >= limits.maxTotalTokens) return `max_total_tokens (${limits.maxTotalTokens}): ${tokens} tokens used`;
  if (runningMs(task, nowMs) >= limits.maxWallClockMinutes * 60_000) return `max_wall_clock_minutes (${limits.maxWallClockMinutes})`;
  return undefined;
}

/** Time the swarm has run: its time paused does not count, as the checkpoints move the task's deadline by it. */
const runningMs = (task: TaskSnapshot, nowMs: number) => nowMs - task.startedAtMs - timePausedMs(task);

async function announceStop(deps: Deps, task: TaskSnapshot, stoppedBy: string): Promise<void> {
  await runTaskStep(deps, 'swarm:stopped', () => appendEvents(deps, task.id, 'workflow', [{
    type: 'WARNING', agentId: LEAD_AGENT_ID, message: `The swarm stopped at its limit ${stoppedBy}; answering from what the agents found`,
    payload: { stopped_by: stoppedBy }, dedupeKey: 'swarm:stopped',
  }]));
}

/** The team's findings combined (team/synthesis.ts); a swarm in which no agent found anything has failed. */
async function synthesize(deps: Deps, task: TaskSnapshot): Promise<AgentAnswer> {
  const findings = await runTaskStep(deps, 'swarm:findings', async () => {
    await appendEvents(deps, task.id, 'workflow', [{
      type: 'PROGRESS', agentId: LEAD_AGENT_ID, message: 'Synthesizing the team\'s findings', payload: { stage: 'synthesizing' }, dedupeKey: 'swarm:synthesizing',
    }]);
    return collectFindings(deps.db, task.id, deps.config.swarm.workspaceSnippetChars);
  });
  if (!findings.results.some((result) => result.ok)) {
    const failures = findings.results.map((result) => (result.ok ? '' : `${result.subtaskId}: ${result.error}`)).filter(Boolean);
    throw new SwarmFailedError(failures.length > 0 ? `every swarm agent failed: ${failures.join('; ')}`.slice(0, 2000) : 'the swarm found nothing');
  }
  const plan = { complexityScore: 1, subtasks: findings.subtasks.filter((subtask) => findings.results.some((result) => result.subtaskId === subtask.id)), executionStrategy: 'parallel' as const, concurrencyLimit: undefined };
  return answerFromResults(deps, task, plan, findings.results);
}
