import type { Deps } from '../deps.ts';
import { badRequest } from '../errors.ts';
import { runDagWorkflow } from './modes/dag/run-dag.ts';
import { runSimpleMode, runSimpleWorkflow } from './modes/simple.ts';
import { runSupervisorWorkflow } from './modes/supervisor/run-supervisor.ts';
import { runTemplateWorkflow, TEMPLATE_MODE } from './modes/template/run-template.ts';
import { RESEARCH_MODE, runResearchWorkflow } from './modes/research/run-research.ts';
import { NAMED_AGENT_MODE, runNamedAgent } from './modes/named-agent/run-named-agent.ts';
import { checkResearchRequest } from './modes/research/strategy/research-request.ts';
import { runSkillWorkflow, SKILL_MODE } from './modes/skill/run-skill.ts';
import { runSwarmWorkflow, SWARM_MODE } from './modes/swarm/run-swarm.ts';
import { appendEvents } from '../task-state/change-task.ts';
import { isDisplaced } from '../engine/engine.ts';
import { endsTheTask } from './runtime/control-errors.ts';
import { runTaskStep } from './runtime/task-step.ts';
import { isSimplePlan, type TaskPlan } from './planning/plan.ts';
import type { PlanningHint } from './planning/decompose.ts';
import { approvedPlanOf } from './planning/planned-task.ts';
import type { TaskOutcome } from './runtime/task-lifecycle.ts';
import type { TaskSettings } from './runtime/task-settings.ts';
import type { TaskSnapshot } from './runtime/task-snapshot.ts';

/** What a submission asks for, as the workflows see it: its mode, its context, and its top-level options. */
export interface WorkRequest {
  mode?: string;
  context: Record<string, unknown>;
  options: Record<string, unknown>;
}

/** A request setting only some workflows use. `asks`: the request sets it to something (`false` asks for nothing). */
interface RequestSetting {
  /** How a refusal names it. */
  name: string;
  asks(request: WorkRequest): boolean;
  refusal(request: WorkRequest): string;
  /** What a mode's selector is set to, to choose it (default "to true"). */
  choice?: string;
}

type Runner = (deps: Deps, task: TaskSnapshot) => Promise<TaskOutcome>;

export interface ModeEntry {
  /** The mode the task runs (and reports) when this entry is chosen. */
  mode: string;
  /** A client may name it in `mode`. */
  requestable: boolean;
  /** Chosen ahead of the task's mode when its settings ask for it (a template, research, a skill). */
  chosenBy?: (settings: TaskSettings) => boolean;
  /** The request setting that chooses it, refused by name while the mode has no runner. */
  selector?: RequestSetting;
  /** The settings only this mode (and others that list the same setting) uses. */
  accepts: RequestSetting[];
  /** Checks the values of the settings it accepts (types, ranges): a 400 naming each wrong one. */
  validate?: (request: WorkRequest) => void;
  /** Absent: the mode is not available in this deployment, and a request for it is a 400. */
  run?: Runner;
}

const setting = (name: string, asks: RequestSetting['asks'], refusal: RequestSetting['refusal']): RequestSetting => ({ name, asks, refusal });

const maxIterations = setting(
  'max_iterations',
  (request) => request.options.max_iterations !== undefined,
  () => 'max_iterations applies to research and swarm iterations, which are not available in this deployment',
);

/** A planned mode: the plan (decomposed with the mode as a hint, approved when it must be) runs with `runPlan`. */
const planned = (hint: PlanningHint, runPlan: (deps: Deps, task: TaskSnapshot, plan: TaskPlan) => Promise<TaskOutcome>): Runner =>
  async (deps, task) => runPlan(deps, task, await approvedPlanOf(deps, task, hint));

/**
 * Every workflow mode, with what chooses it, what it accepts and what runs it (reference §1.3). Without a mode a
 * task is planned (`auto`): a one-subtask, tool-less plan of low complexity runs as a simple task, anything bigger
 * as a DAG reported as `standard`. Modes without a runner are listed so that asking for them is refused by name
 * rather than run as something else (issue 14, "no silent fallback"); each gets its runner as its workflow lands.
 */
export const MODE_TABLE: readonly ModeEntry[] = [
  { mode: TEMPLATE_MODE, requestable: false, chosenBy: (settings) => settings.template !== undefined, accepts: [], run: runTemplateWorkflow },
  { mode: 'simple', requestable: true, accepts: [], run: runSimpleMode },
  { mode: 'standard', requestable: true, accepts: [], run: planned('standard', (deps, task, plan) => runDagWorkflow(deps, task, plan, 'standard')) },
  { mode: 'complex', requestable: true, accepts: [], run: planned('complex', (deps, task, plan) => runDagWorkflow(deps, task, plan, 'complex')) },
  { mode: 'supervisor', requestable: true, accepts: [], run: planned('supervisor', runSupervisorWorkflow) },
  {
    mode: 'auto', requestable: false, accepts: [],
    run: planned(undefined, async (deps, task, plan) => (isSimplePlan(plan)
      ? { ...await runSimpleWorkflow(deps, task), complexityScore: plan.complexityScore }
      : runDagWorkflow(deps, task, plan, 'standard'))),
  },
  {
    mode: RESEARCH_MODE, requestable: false,
    selector: setting('context.force_research', (request) => request.context.force_research === true, () => 'force_research: deep research is not available in this deployment'),
    accepts: [
      setting('research_strategy', (request) => request.context.research_strategy !== undefined || request.options.research_strategy !== undefined, () => 'research_strategy applies to deep research, which is not available in this deployment'),
      setting(
        'iterative research and fact extraction',
        (request) => request.context.iterative_research_enabled === true || request.context.iterative_max_iterations !== undefined || request.context.enable_fact_extraction === true,
        () => 'iterative research and fact extraction apply to deep research, which is not available in this deployment',
      ),
      setting(
        'enable_verification',
        (request) => request.options.enable_verification === true || request.context.enable_verification === true,
        () => 'enable_verification checks research citations, and deep research is not available in this deployment',
      ),
      setting('context.enable_citations', (request) => request.context.enable_citations !== undefined, () => 'enable_citations applies to deep research, which is not available in this deployment'),
      setting(
        'context.require_review',
        (request) => request.context.require_review === true || request.context.review_plan === 'manual' || request.context.review_timeout !== undefined,
        () => 'the review of a research plan applies to deep research, which is not available in this deployment',
      ),
      maxIterations,
    ],
    chosenBy: (settings) => settings.forceResearch,
    validate: checkResearchRequest,
    run: runResearchWorkflow,
  },
  {
    mode: SWARM_MODE, requestable: false,
    selector: setting('context.force_swarm', (request) => request.context.force_swarm === true, () => 'force_swarm: the swarm workflow is not available in this deployment'),
    accepts: [maxIterations],
    chosenBy: (settings) => settings.forceSwarm,
    run: runSwarmOrRoute,
  },
  {
    mode: NAMED_AGENT_MODE, requestable: false,
    selector: {
      ...setting('context.agent', (request) => request.context.agent !== undefined, (request) => `context.agent ${String(request.context.agent)}: single-purpose agents are not available in this deployment`),
      choice: 'to an agent id (GET /api/v1/agents)',
    },
    accepts: [setting('context.agent_input', (request) => request.context.agent_input !== undefined, () => 'agent_input is the input of context.agent, and single-purpose agents are not available in this deployment')],
    chosenBy: (settings) => settings.agent !== undefined,
    run: runNamedAgent,
  },
  {
    mode: SKILL_MODE, requestable: false,
    selector: setting('skill', (request) => request.context.skill !== undefined, (request) => `skill ${String(request.context.skill)}: skills are not available in this deployment`),
    accepts: [],
    // Submission resolves the skill, refuses what it cannot run with, and pins it (skills/skill-request.ts).
    chosenBy: (settings) => settings.skill !== undefined,
    run: runSkillWorkflow,
  },
  {
    mode: 'ads_research', requestable: false,
    accepts: [setting('context.platforms', (request) => request.context.platforms !== undefined, () => 'platforms applies to the ads_research role, which is not available in this deployment')],
  },
];

/**
 * Spec 4.2 rule 8: a deployment with the swarm off runs a force_swarm task through normal routing; a swarm that fails
 * entirely (every agent failed, or the lead could not lead) falls back to the same routing with force_swarm removed,
 * announced with ERROR_RECOVERY. Rule 9 (some agents failed) is the swarm's own: it answers from the rest.
 */
async function runSwarmOrRoute(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  if (!deps.config.swarm.enabled) return runWithoutSwarm(deps, task);
  try {
    return await runSwarmWorkflow(deps, task);
  } catch (error) {
    if (endsTheTask(error) || isDisplaced(error) || deps.handingOver.aborted) throw error;
    const reason = error instanceof Error ? error.message : String(error);
    await runTaskStep(deps, 'swarm:fallback', () => appendEvents(deps, task.id, 'workflow', [{
      type: 'ERROR_RECOVERY', agentId: 'orchestrator', message: 'The swarm failed; answering through standard routing without force_swarm',
      payload: { recovery: 'swarm_fallback', error: reason.slice(0, 1000) }, dedupeKey: 'swarm:fallback',
    }]));
    return runWithoutSwarm(deps, task);
  }
}

function runWithoutSwarm(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const { force_swarm: _dropped, ...context } = task.context;
  const withoutSwarm = { ...task, context, settings: { ...task.settings, forceSwarm: false } };
  const mode = task.mode ?? task.requestedMode ?? deps.config.defaultTaskMode;
  const entry = modeEntryFor(withoutSwarm.settings, mode);
  if (!entry?.run) throw new Error(`mode ${mode} is not available in this deployment`);
  return entry.run(deps, withoutSwarm);
}

const served = MODE_TABLE.filter((entry) => entry.run !== undefined);

/** The modes this deployment runs (spec 2.1); the OpenAI layer offers only the models of these. */
export const SERVED_MODES: readonly string[] = served.map((entry) => entry.mode);

const REQUESTABLE_MODES = served.filter((entry) => entry.requestable).map((entry) => entry.mode);

/**
 * 400 naming the first thing the request asks for that no mode of this deployment runs: an unserved `mode`, the
 * setting that chooses an unserved mode, then a setting only unserved modes accept.
 */
export function refuseUnservedRequest(request: WorkRequest): void {
  if (request.mode !== undefined && !REQUESTABLE_MODES.includes(request.mode)) {
    throw badRequest(`mode ${request.mode} is not available in this deployment (available: ${REQUESTABLE_MODES.join(', ')})`);
  }
  const unserved = MODE_TABLE.filter((entry) => entry.run === undefined);
  const isServed = (candidate: RequestSetting) => served.some((entry) => entry.selector === candidate || entry.accepts.includes(candidate));
  const refused = [
    ...unserved.flatMap((entry) => (entry.selector ? [entry.selector] : [])),
    ...unserved.flatMap((entry) => entry.accepts),
  ].find((candidate) => !isServed(candidate) && candidate.asks(request));
  if (refused) throw badRequest(refused.refusal(request));
  refuseUnselectedSettings(request);
  for (const entry of served) entry.validate?.(request);
}

/**
 * A setting of a mode that settings choose (research) is refused, naming what chooses the mode, when the request
 * does not choose it: it would change nothing.
 */
function refuseUnselectedSettings(request: WorkRequest): void {
  const chosen = served.filter((entry) => entry.selector === undefined || entry.selector.asks(request));
  for (const entry of served.filter((candidate) => candidate.selector !== undefined && !chosen.includes(candidate))) {
    const stray = entry.accepts.find((candidate) => candidate.asks(request) && !chosen.some((other) => other.accepts.includes(candidate)));
    if (stray) throw badRequest(`${stray.name} applies to ${entry.mode} tasks only: set ${entry.selector!.name} ${entry.selector!.choice ?? 'to true'} to run one`);
  }
}

/** The entry that runs a task: the one its settings choose, else its mode's. */
export function modeEntryFor(settings: TaskSettings, mode: string): ModeEntry | undefined {
  return MODE_TABLE.find((entry) => entry.chosenBy?.(settings)) ?? MODE_TABLE.find((entry) => entry.mode === mode);
}
