import type { JSONSchema7 } from '@ai-sdk/provider';
import type { Static, TSchema } from 'typebox';
import type { Deps } from '../../../deps.ts';
import { currentStepId } from '../../../engine/engine.ts';
import type { ModelTier } from '../../../llm/model-catalog.ts';
import { callModelWithinBudget, reservationWith } from '../../agent-calls/budgeted-call.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { parseJsonAnswer } from '../../planning/decompose.ts';
import { parseModelAnswer } from './model-answers/parse-model-answer.ts';
import type { PhasePrompt } from './research-prompts.ts';
import { ResearchPhaseError } from './research-phase-error.ts';

export interface StructuredPhase<S extends TSchema> {
  /** The durable step's name, and the phase a failure names. */
  step: string;
  phase: string;
  agentId: string;
  /** Announced as PROGRESS when the phase's call starts, in the commit that reserves its tokens. */
  progress: string;
  prompt: PhasePrompt;
  schema: S;
  tier: ModelTier;
  /** The mock provider's phase (llm/mock-research.ts) and any scripting of it. */
  mock: Record<string, unknown>;
  maxOutputTokens?: number;
}

const PHASE_MAX_OUTPUT_TOKENS = 4096;

/**
 * A research phase that asks the model for a structured answer, as one durable step: the budgeted call with
 * PROGRESS in its reservation's commit (a spent budget pauses the task here), and the answer checked against the schema. An answer that does not fit,
 * or a model that fails, fails the phase (ResearchPhaseError names it); a replay returns the recorded answer.
 */
export function askStructured<S extends TSchema>(deps: Deps, task: TaskSnapshot, phase: StructuredPhase<S>): Promise<Static<S>> {
  return runTaskStep(deps, phase.step, () => withCancelWatch(deps, task.id, async (cancel) => {
    const stepKey = `${phase.step}#${currentStepId()}`;
    const progress = { type: 'PROGRESS', agentId: phase.agentId, message: phase.progress, payload: { stage: phase.phase }, dedupeKey: `${stepKey}:start` };
    const outcome = await callModelWithinBudget(deps, task, {
      agentId: phase.agentId,
      callKey: `${task.id}:${stepKey}`,
      request: {
        selection: { ...task.settings.models, modelTier: task.settings.models.modelTier ?? phase.tier },
        system: phase.prompt.system,
        messages: [{ role: 'user', content: phase.prompt.user }],
        responseSchema: phase.schema as unknown as JSONSchema7,
        mockOptions: phase.mock,
      },
      maxOutputTokens: phase.maxOutputTokens ?? PHASE_MAX_OUTPUT_TOKENS,
      onSpentBudget: { waitAt: phase.phase },
      open: reservationWith([progress]),
    }, cancel);
    if (!('result' in outcome)) throw new Error(`the ${phase.phase} phase waits out a spent budget`);
    const parsed = parseModelAnswer(phase.schema, parseJsonAnswer(outcome.result.text));
    if (!parsed.ok) throw new ResearchPhaseError(phase.phase, parsed.problem);
    return parsed.value;
  }));
}
