import { isDatabaseUnavailable } from '../../../db/database-errors.ts';
import type { Deps } from '../../../deps.ts';
import { isDisplaced } from '../../../engine/engine.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { runBudgetedAgent } from '../../agent-calls/budgeted-agent.ts';
import { taskToolCalls } from '../../agent-calls/tool-call-queries.ts';
import { roleToolSet } from '../../agent-calls/role-tools.ts';
import { withCancelWatch } from '../../runtime/cancel-watch.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import { BudgetExhaustedError, TaskCancelledError, TaskParkedError } from '../../runtime/control-errors.ts';
import { TaskTimeoutError } from '../../runtime/deadline.ts';
import { withPartialResult } from '../../runtime/partial-result.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { runInDependencyOrder } from '../../team/run-in-order.ts';
import { runSubtaskAgent, type SubtaskResult } from '../../team/subtask-agent.ts';
import { collectCitations, type RankedCitation } from './citations/collect-citations.ts';
import { CITABLE_TOOLS } from './citations/tool-sightings.ts';
import { ClaimExtractionSchema, ClaimVerdictsSchema } from './model-answers/claims.ts';
import { CoverageEvaluationSchema, SubqueryGenerationSchema, wantsAnotherRound, type CoverageEvaluation } from './model-answers/coverage.ts';
import { FactExtractionSchema, groundedFacts, summarizeFacts } from './model-answers/facts.ts';
import { RefinementSchema, type Refinement } from './model-answers/refinement.ts';
import { sendReportDeltas } from './report-deltas.ts';
import { citeReport, partialResearchResult, researchMetadata, type ResearchProgress, type WrittenReport } from './research-outcome.ts';
import { ResearchPhaseError } from './research-phase-error.ts';
import {
  claimExtractionPrompt, coveragePrompt, factExtractionPrompt, refinementPrompt, researchAgentPrompt, subqueryPrompt, synthesisPrompt,
  verificationPrompt, type NumberedSource,
} from './research-prompts.ts';
import { askStructured } from './structured-call.ts';
import { REVIEW_PHASE, reviewResearchPlan, type ConfirmedPlan } from './plan-review/review-plan.ts';
import { resolveResearchSettings, type ResearchSettings } from './strategy/research-settings.ts';
import { aggregateVerdicts } from './verification/aggregate-verdicts.ts';
import { rankEvidence } from './verification/rank-evidence.ts';

export const RESEARCH_MODE = 'research';
const RESEARCH_ROLE = 'research';
const SYNTHESIS_AGENT_ID = 'research-synthesis';
/** A research agent's tool budget (reference §1.8, research mode); its model turns with tools are the strategy's. */
const RESEARCH_TOOL_LIMITS = { toolCalls: 25, outputChars: 300_000 };
/** How much of a citation's text the writer sees. */
const EXCERPT_CHARS = 400;

interface ResearchRun {
  deps: Deps;
  task: TaskSnapshot;
  settings: ResearchSettings;
  /** The phase in flight, which a failure names. */
  phase: string;
  progress: ResearchProgress;
}

/**
 * The research workflow (force_research; reference §1.7, issue 27): refine the question, split it into research
 * subtasks, run research agents that search and then read, collect the citations from what their tools returned,
 * write a report, (per the strategy) evaluate coverage and fill the gaps, cite it and send it as the answer's deltas,
 * then (per the strategy) verify the claims and extract facts. Every phase is a durable step, so a restarted task
 * resumes at the phase in flight; pause and cancel are honoured at the named checkpoints between phases.
 */
export async function runResearchWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const settings = resolveResearchSettings(deps.research.strategies, { context: task.context, options: task.options });
  const run: ResearchRun = { deps, task, settings, phase: 'query_refinement', progress: { findings: [], citations: [], iterations: 0 } };
  try {
    return await research(run);
  } catch (error) {
    throw failureOf(run, error);
  }
}

/**
 * A failure of the task (a phase's, the deadline, a budget it may not wait on) names the phase and carries what
 * the task produced so far to its FAILED or TIMEOUT status. What is not the task's failure passes as it is: a
 * cancel, a park, an outage, a shutdown, another worker taking the workflow over.
 */
function failureOf(run: ResearchRun, error: unknown): unknown {
  if (run.deps.handingOver.aborted || isDisplaced(error) || TaskCancelledError.isInstance(error) || TaskParkedError.isInstance(error) || isDatabaseUnavailable(error)) {
    return error;
  }
  const named = TaskTimeoutError.isInstance(error) || BudgetExhaustedError.isInstance(error) || ResearchPhaseError.isInstance(error);
  const failure = named ? error : new ResearchPhaseError(run.phase, error instanceof Error ? error.message : String(error));
  return withPartialResult(failure, partialResearchResult(run.settings, run.progress, run.phase));
}

async function research(run: ResearchRun): Promise<TaskOutcome> {
  const { deps, task, settings, progress } = run;
  let confirmed: ConfirmedPlan | undefined;
  if (settings.review.required) {
    await enter(run, REVIEW_PHASE);
    confirmed = await reviewResearchPlan(deps, task, settings.review.timeoutSeconds);
  }
  await enter(run, 'query_refinement');
  const refinement = await refine(run, confirmed);
  await enter(run, 'decomposition');
  const subtasks = await runTaskStep(deps, 'research:decompose', () => announceSubtasks(run, refinement));
  await enter(run, 'agent_execution');
  progress.findings = await runResearchAgents(run, refinement, subtasks, 'agent');
  await enter(run, 'synthesis');
  let report = await synthesize(run, refinement, 0);
  if (settings.iterative.enabled) {
    for (let round = 1; round <= settings.iterative.maxIterations; round++) {
      progress.iterations = round;
      await enter(run, `coverage_eval_${round}`);
      const evaluation = await evaluateCoverage(run, refinement, report.answer.text, round);
      if (!wantsAnotherRound(evaluation)) break;
      await enter(run, `subquery_gen_${round}`);
      const gaps = await generateSubqueries(run, refinement, evaluation, round);
      await enter(run, `gap_filling_${round}`);
      progress.findings.push(...await runResearchAgents(run, refinement, gaps, `gap${round}`));
      report = await synthesize(run, refinement, round);
    }
  }
  const cited = citeReport(settings, report);
  await sendReportDeltas(deps, task, cited.text);
  if (settings.verification) progress.verification = await verify(run, cited.text, cited.citations);
  const facts = settings.factExtraction ? await extractFacts(run, cited.text, cited.citations) : undefined;
  // The task's own pre_completion checkpoint follows (task-workflow.ts).
  return {
    mode: RESEARCH_MODE,
    answer: { ...report.answer, text: cited.text },
    agentsUsed: progress.findings.length,
    complexityScore: null,
    metadata: {
      ...researchMetadata(settings, progress, cited.citations),
      ...(facts ? { extracted_facts: facts.facts, fact_summary: facts.summary } : {}),
    },
  };
}

/** The checkpoint before a phase (pause and cancel land here), and the phase a failure from now on names. */
async function enter(run: ResearchRun, phase: string): Promise<void> {
  run.phase = phase;
  await checkpoint(run.deps, run.task, `pre_${phase}`);
}

/** The question restated and split into dimensions; a plan its owner confirmed comes with it and leads. */
function refine(run: ResearchRun, confirmed: ConfirmedPlan | undefined): Promise<Refinement> {
  const plan = confirmed && [confirmed.plan, confirmed.brief ? `Research brief: ${confirmed.brief}` : ''].filter(Boolean).join('\n\n');
  return askStructured(run.deps, run.task, {
    step: 'research:refine', phase: 'query_refinement', agentId: 'research-refiner', progress: 'Refining the research question',
    prompt: refinementPrompt(run.task.query, plan), schema: RefinementSchema, tier: run.settings.modelTiers.utility, mock: { purpose: 'research-refinement' },
  });
}

interface ResearchSubtask {
  id: string;
  description: string;
  dependencies: string[];
}

/** One research agent per dimension of the refined question (its questions are the agent's assignment). */
async function announceSubtasks(run: ResearchRun, refinement: Refinement): Promise<ResearchSubtask[]> {
  const dimensions = refinement.research_dimensions.length > 0
    ? refinement.research_dimensions.map((dimension) => `${dimension.dimension}: ${dimension.questions.join(' ')}`.trim())
    : [refinement.refined_query];
  const subtasks = dimensions.map((description, index) => ({ id: `research-${index + 1}`, description, dependencies: [] }));
  await appendEvents(run.deps, run.task.id, 'workflow', [{
    type: 'PROGRESS', agentId: 'orchestrator', message: `Researching ${subtasks.length} ${subtasks.length === 1 ? 'area' : 'areas'}`,
    payload: { stage: 'decomposition', subtasks }, dedupeKey: 'research:decomposed',
  }]);
  return subtasks;
}

async function runResearchAgents(run: ResearchRun, refinement: Refinement, subtasks: ResearchSubtask[], prefix: string): Promise<SubtaskResult[]> {
  const { deps, task, settings } = run;
  const named = subtasks.map((subtask) => ({ ...subtask, id: prefix === 'agent' ? subtask.id : `${prefix}-${subtask.id}` }));
  const results = await withCancelWatch(deps, task.id, (cancel) => runInDependencyOrder<ResearchSubtask, SubtaskResult>(deps, {
    order: named, concurrency: settings.maxConcurrentAgents, stepName: (subtask) => `research:${subtask.id}`,
  }, (subtask) => {
    const prompt = researchAgentPrompt(subtask.description, refinement.refined_query);
    return runSubtaskAgent(deps, task, {
      subtask: { ...subtask, suggestedTools: [], toolParameters: {} },
      inputs: [], attempt: 1, finalAnswer: false,
      call: {
        agentId: subtask.id, progress: `Researching: ${subtask.description.slice(0, 200)}`,
        system: prompt.system, messages: [{ role: 'user', content: prompt.user }],
        modelTier: settings.modelTiers.agents, purpose: 'research-agent', onSpentBudget: { waitAt: subtask.id },
        mockScript: (task.settings.mock.failures[subtask.id] ?? 0) > 0 ? { fail: true } : undefined,
        maxOutputTokens: task.settings.maxOutputTokens,
        tools: { ...roleToolSet(deps.tools, task.tenantId, RESEARCH_ROLE), limits: { ...RESEARCH_TOOL_LIMITS, iterations: settings.reactMaxIterations } },
      },
    }, cancel);
  }));
  const ordered = named.map((subtask) => results.get(subtask.id)!);
  if (!ordered.some((result) => result.ok)) {
    throw new Error(`every research agent failed: ${ordered.map((result) => (result.ok ? '' : `${result.subtaskId}: ${result.error}`)).join('; ')}`.slice(0, 2000));
  }
  return ordered;
}

/** The citations of everything the task's tools returned so far: recorded once per round, so a replay cites the same. */
function taskCitations(run: ResearchRun, round = 0): Promise<RankedCitation[]> {
  return runTaskStep(run.deps, `research:citations:${round}`, async () => {
    const observations = await taskToolCalls(run.deps.db, run.task.id, CITABLE_TOOLS);
    return collectCitations(observations, run.deps.research.citationRules, new Date());
  });
}

/** The report from every finding so far, citing what the task's tools returned by this round. */
async function synthesize(run: ResearchRun, refinement: Refinement, round: number): Promise<WrittenReport> {
  const { progress } = run;
  progress.citations = await taskCitations(run, round);
  const sources: NumberedSource[] = progress.citations.map((citation) => ({ title: citation.title, url: citation.url, excerpt: excerptOf(citation) }));
  const findings = progress.findings.flatMap((finding) => (finding.ok ? [{ subtask: finding.subtaskId, answer: finding.answer.text }] : []));
  const prompt = synthesisPrompt(refinement.refined_query, findings, sources);
  const answer = await runBudgetedAgent(run.deps, run.task, async () => ({
    agentId: SYNTHESIS_AGENT_ID, progress: round === 0 ? 'Writing the report' : `Writing the report again with round ${round}'s findings`,
    purpose: 'research-synthesis', modelTier: run.settings.modelTiers.synthesis, maxOutputTokens: run.task.settings.maxOutputTokens,
    system: prompt.system, messages: [{ role: 'user', content: prompt.user }],
  }), `research:synthesis:${round}`);
  progress.report = { answer, sources: progress.citations };
  return progress.report;
}

function evaluateCoverage(run: ResearchRun, refinement: Refinement, report: string, round: number): Promise<CoverageEvaluation> {
  const scripted = Array.isArray(run.task.context.mock_coverage) ? run.task.context.mock_coverage[round - 1] : undefined;
  return askStructured(run.deps, run.task, {
    step: `research:coverage:${round}`, phase: `coverage_eval_${round}`, agentId: 'coverage-evaluator', progress: `Checking what the report covers (round ${round})`,
    prompt: coveragePrompt(refinement.refined_query, report, round), schema: CoverageEvaluationSchema, tier: run.settings.modelTiers.utility,
    mock: { purpose: 'coverage-evaluation', ...(scripted === undefined ? {} : { coverage: scripted }) },
  });
}

async function generateSubqueries(run: ResearchRun, refinement: Refinement, evaluation: CoverageEvaluation, round: number): Promise<ResearchSubtask[]> {
  const { subqueries } = await askStructured(run.deps, run.task, {
    step: `research:subqueries:${round}`, phase: `subquery_gen_${round}`, agentId: 'subquery-generator', progress: `Planning searches for ${evaluation.critical_gaps.length} gaps`,
    prompt: subqueryPrompt(refinement.refined_query, evaluation.critical_gaps), schema: SubqueryGenerationSchema, tier: run.settings.modelTiers.utility,
    mock: { purpose: 'subquery-generation' },
  });
  return subqueries.slice(0, run.settings.maxConcurrentAgents).map((subquery, index) => ({ id: `research-${index + 1}`, description: subquery.query, dependencies: [] }));
}

/** Claims of the report, the best evidence for each among the citations (BM25), and a verdict per claim. */
async function verify(run: ResearchRun, report: string, citations: RankedCitation[]) {
  run.phase = 'verification';
  await checkpoint(run.deps, run.task, 'pre_verification');
  const { claims } = await askStructured(run.deps, run.task, {
    step: 'research:claims', phase: 'verification', agentId: 'claim-extractor', progress: 'Finding the claims to check',
    prompt: claimExtractionPrompt(report), schema: ClaimExtractionSchema, tier: run.settings.modelTiers.utility, mock: { purpose: 'claim-extraction' },
  });
  const evidence = rankEvidence(claims, citations.map((citation) => ({ title: citation.title, snippet: citation.snippet, content: citation.content })));
  const { verdicts } = await askStructured(run.deps, run.task, {
    step: 'research:verdicts', phase: 'verification', agentId: 'claim-verifier', progress: `Checking ${claims.length} claims against their sources`,
    prompt: verificationPrompt(evidence), schema: ClaimVerdictsSchema, tier: run.settings.modelTiers.utility, mock: { purpose: 'claim-verification' },
  });
  return aggregateVerdicts(verdicts, citations.length);
}

async function extractFacts(run: ResearchRun, report: string, citations: RankedCitation[]) {
  run.phase = 'fact_extraction';
  const sources = citations.map((citation) => ({ title: citation.title, url: citation.url, excerpt: citation.snippet }));
  const { facts } = await askStructured(run.deps, run.task, {
    step: 'research:facts', phase: 'fact_extraction', agentId: 'fact-extractor', progress: 'Extracting the facts of the report',
    prompt: factExtractionPrompt(report, sources), schema: FactExtractionSchema, tier: run.settings.modelTiers.utility, mock: { purpose: 'fact-extraction' },
  });
  const grounded = groundedFacts(facts, citations.length);
  return { facts: grounded, summary: summarizeFacts(grounded) };
}

/** The start of a citation's prose (its page's text when fetched, else its snippet), headings left out. */
function excerptOf(citation: RankedCitation): string {
  const text = citation.content ?? citation.snippet;
  return text.split('\n').filter((line) => !/^\s*#/.test(line)).join(' ').replace(/\s+/g, ' ').trim().slice(0, EXCERPT_CHARS);
}
