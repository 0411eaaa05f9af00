import type { TaskSettings } from '../runtime/task-settings.ts';

/**
 * How a task that names no mode is routed (issue 30, Scope 5): `direct` is one agent answering at once, without
 * the planning call; `planned` is the decomposition call first, as before. Recorded in the task's metadata.
 */
export interface Routing {
  decision: 'direct' | 'planned';
  reason: string;
}

/** Longer queries are planned: a question this long usually carries more than one thing to do. */
export const DIRECT_MAX_WORDS = 20;
const DIRECT_MAX_CHARACTERS = 160;

/** A word or phrase that, anywhere in the query, sends it to the planner; the reason names its kind. */
const PLANNING_SIGNALS: ReadonlyArray<{ pattern: RegExp; reason: string }> = [
  { pattern: /\b(then|after that|afterwards|finally|firstly|secondly|next|followed by|once (that|done|finished))\b|(^|[.,;]\s*)(first|second)\b|\bfirst,/i, reason: 'a sequence of steps' },
  { pattern: /\b(steps?|step-by-step|stages?|phases?|plan|roadmap|guide|walkthrough|checklist)\b/i, reason: 'asks for steps or a plan' },
  { pattern: /\b(compare|comparison|comparing|contrast|versus|vs\.?|differen(ce|ces|t) between|better than|worse than|pros|cons|trade-?offs?|advantages|disadvantages)\b/i, reason: 'a comparison' },
  { pattern: /\b(best|worst|recommend(ation)?s?|should (i|we)|which (one|is better))\b/i, reason: 'a recommendation (weighs options)' },
  { pattern: /\b(and|or|plus|as well as|along with|in addition|also|both|either|neither)\b/i, reason: 'a conjunction (possibly more than one part)' },
  { pattern: /\b(each|every|all of|for all|respectively|top \d+|\d+ (ways|reasons|examples|ideas|options))\b/i, reason: 'an enumeration' },
  {
    pattern: /\b(analy[sz]e|analysis|research|investigate|evaluate|assess|review|audit|design|architect|implement|build|develop|refactor|debug|optimi[sz]e|report|essay|article|strategy|comprehensive|detailed|in detail|at length|all about|everything about|in[- ]depth|thorough|outline|summari[sz]e|breakdown)\b/i,
    reason: 'open-ended or long-form work',
  },
  {
    pattern: /\b(search|look up|lookup|google|browse|fetch|download|scrape|website|web ?page|link|latest|current(ly)?|today|tonight|tomorrow|yesterday|now|news|recent(ly)?|this (week|month|year)|price|stock|weather|forecast|score|exchange rate)\b/i,
    reason: 'may need a tool or fresh information',
  },
  { pattern: /\b(calculate|compute|solve|convert|execute|code|script|program|python|sql|file|csv|spreadsheet|dataset)\b/i, reason: 'may need a tool (code, files, calculation)' },
  { pattern: /https?:\/\/|www\.|\b[\w-]+\.(com|org|net|io|dev|ai|gov|edu)\b/i, reason: 'names a web address' },
  { pattern: /\d\s*[-+*/^×÷%]\s*\d/, reason: 'arithmetic (a calculator may be suggested)' },
];

/**
 * The route of a query, from its text alone (so a replay decides the same): `direct` only when it is clearly simple
 * — at most DIRECT_MAX_WORDS words in one sentence with at most one question mark, no list, clause break or line
 * break, and none of the planning signals above. Anything else, including everything merely ambiguous, is planned:
 * planning costs one call, answering a multi-step question badly costs the task.
 */
export function routeOfQuery(query: string): Routing {
  const text = query.trim();
  if (text === '') return planned('an empty query');
  const words = text.split(/\s+/).length;
  if (words > DIRECT_MAX_WORDS || text.length > DIRECT_MAX_CHARACTERS) return planned(`a long query (${words} words)`);
  const structure = structureProblem(text);
  if (structure) return planned(structure);
  const signal = PLANNING_SIGNALS.find((candidate) => candidate.pattern.test(text));
  if (signal) return planned(`${signal.reason}: "${signal.pattern.exec(text)![0]}"`);
  return { decision: 'direct', reason: `a short single request (${words} words) with no sign of more than one part` };
}

function structureProblem(text: string): string | undefined {
  if (/\n/.test(text)) return 'more than one line';
  if ((text.match(/\?/g) ?? []).length > 1) return 'more than one question';
  // A sentence end followed by more text: a second sentence is a second instruction or a premise to weigh.
  if (/[.!?]\s+\S/.test(text.replace(/\b(e\.g|i\.e|etc|mr|mrs|ms|dr|st|vs|u\.s)\./gi, ''))) return 'more than one sentence';
  if (/[;:]/.test(text)) return 'clauses joined by a colon or semicolon';
  if ((text.match(/,/g) ?? []).length >= 2) return 'a list (two or more commas)';
  if (/(^|\s)(\d+[.)]|[-*•])\s/.test(text)) return 'a numbered or bulleted list';
  return undefined;
}

const planned = (reason: string): Routing => ({ decision: 'planned', reason });

/**
 * The route of a task without a mode under DEFAULT_TASK_MODE=auto, or undefined when no routing happens: its
 * settings choose another workflow (a template, research, a skill, a named agent, the swarm) or give it one agent
 * with a role's tools. Settings that need the plan or tools — an approval of the plan, a scripted mock plan or mock
 * tool calls — keep it planned; otherwise the query decides.
 */
export function routeOfTask(settings: TaskSettings, query: string, otherWorkflowChosen: boolean): Routing | undefined {
  if (otherWorkflowChosen || settings.roleAssigned) return undefined;
  if (settings.requireApproval) return planned('approval is required: the approver reviews a plan');
  if (settings.mock.plan !== undefined) return planned('context.mock_plan scripts the plan');
  if (settings.mock.toolCalls !== undefined) return planned('context.mock_tool_calls needs an agent with tools');
  return routeOfQuery(query);
}
