import type { Deps } from '../../../deps.ts';
import type { NewTaskEvent } from '../../../events/append-event.ts';
import { changeTask } from '../../../task-state/change-task.ts';
import type { PriorReservation } from '../../agent-calls/budgeted-call.ts';
import { reserveTogether } from '../../agent-calls/token-budget.ts';
import { allowForWaitsInSteps } from '../../runtime/deadline.ts';
import { timePausedMs, type TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { SWARM_MAX_OUTPUT_TOKENS, swarmCallKey } from './swarm-call.ts';
import { readAgents, turnStepName, type SwarmAgent } from './swarm-queries.ts';

/** The tokens set aside for each turn of a round, when the round could set them aside. */
export type RoundReservations = Record<string, PriorReservation>;

/**
 * The input a round sets aside for each turn, in tokens: more than a turn's prompt takes until its history grows
 * long (a turn whose prompt is larger reserves for itself).
 */
export const TURN_INPUT_ALLOWANCE = 8_000;

/**
 * Sets aside the tokens of every turn of a round in one commit (`swarm:reserve:<n>`), with each turn's PROGRESS,
 * instead of one commit per turn that the round's concurrent turns would queue for on the task's row. Each turn gets
 * an allowance, not its prompt's estimate, so no prompt is built here. All or none, and only while the budgets keep
 * as much room again (token-budget.ts `reserveTogether`): near a budget, each turn reserves exactly for itself and
 * meets the spent-budget policy there, as it would without this.
 */
export function reserveRound(deps: Deps, task: TaskSnapshot, active: string[], round: number): Promise<RoundReservations> {
  return runTaskStep(deps, `swarm:reserve:${round}`, async () => {
    const team = await readAgents(deps.db, task.id);
    const playing = team.filter((agent) => active.includes(agent.name) && agent.status === 'active' && !timeIsUp(deps, task, agent));
    const calls = playing.map((agent) => ({ callKey: swarmCallKey(task, turnStepName(agent.name, round)), estimatedInput: TURN_INPUT_ALLOWANCE, wantedOutput: SWARM_MAX_OUTPUT_TOKENS }));
    const spare = calls.length * (TURN_INPUT_ALLOWANCE + SWARM_MAX_OUTPUT_TOKENS);
    const reserved = await changeTask(deps, task.id, 'workflow', async (transaction, row) => {
      allowForWaitsInSteps(task, row);
      if (!await reserveTogether(transaction, deps.config, task, calls, spare)) return { events: [], result: {} };
      const allowance = { estimatedInput: TURN_INPUT_ALLOWANCE, maxOutputTokens: SWARM_MAX_OUTPUT_TOKENS };
      return {
        events: playing.map((agent) => turnProgress(agent.name, agent.turns + 1, round, turnStepName(agent.name, round))),
        result: Object.fromEntries(playing.map((agent) => [agent.name, allowance])) as RoundReservations,
      };
    });
    return reserved ?? {};
  });
}

/**
 * An agent that has worked `agent_timeout_seconds` since it was spawned, the swarm's time paused since then left out:
 * its next turn fails it without a call.
 */
export function timeIsUp(deps: Deps, task: TaskSnapshot, agent: SwarmAgent): boolean {
  const workedMs = Date.now() - agent.spawnedAt.getTime() - (timePausedMs(task) - agent.pausedMsAtSpawn);
  return workedMs >= deps.config.swarm.agentTimeoutSeconds * 1000;
}

/** PROGRESS for an agent's turn, committed with the tokens set aside for it (the round's, or the turn's own). */
export const turnProgress = (agent: string, turn: number, round: number, stepKey: string): NewTaskEvent => ({
  type: 'PROGRESS', agentId: agent, message: `${agent}: turn ${turn}`,
  payload: { stage: 'agent_iteration', agent, turn, round }, dedupeKey: `${stepKey}:progress`,
});
