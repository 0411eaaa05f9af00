/**
 * The mock's decomposition of a request into subtasks, the way a planning model splits one (issue 31, scope 6):
 * sentences and steps joined by "then" (or "after that", "finally", a semicolon) run in order, each depending on the
 * step before; clauses joined by "and" or commas that each start with an action (find, summarise, list, …) run in
 * parallel; a comparison of two things ("compare the climate of Lisbon and Oslo", "Rust vs Go") studies each
 * separately, in parallel, and the comparison is made by the step after, or by a subtask of its own. Deterministic
 * and from the request alone, so a real provider gets exactly the same call.
 */

export type MockSubtask = { id: string; description: string; dependencies: string[]; suggested_tools: string[]; tool_parameters: Record<string, unknown> };

const MAX_SUBTASKS = 8;

const ACTIONS = [
  'analyse', 'analyze', 'assess', 'calculate', 'check', 'collect', 'compare', 'compile', 'compute', 'contrast', 'convert',
  'create', 'describe', 'design', 'determine', 'draft', 'estimate', 'evaluate', 'explain', 'fetch', 'find', 'gather',
  'give', 'identify', 'investigate', 'list', 'look', 'make', 'name', 'outline', 'plan', 'prepare', 'propose', 'rank',
  'read', 'recommend', 'research', 'review', 'rewrite', 'search', 'suggest', 'summarise', 'summarize', 'tell',
  'translate', 'verify', 'write', 'build', 'produce', 'present', 'provide', 'pick', 'choose', 'decide', 'add', 'include',
];
const ACTION = `(?:${ACTIONS.join('|')})`;
/** Where one step ends and the next, which uses its result, begins. */
const SEQUENCE = /\s*[;,]\s*(?:and\s+)?(?:then|after that|afterwards|finally|next)\s+|\s+(?:and\s+)?(?:then|after that|afterwards)\s+|\s+and use (?:that|it|them) to\s+|;\s*/i;
const LEADING_SEQUENCE = /^(?:and\s+)?(?:then|after that|afterwards|finally|next)\b,?\s*/i;
/** Where two independent actions meet: "and" or a comma before an action verb. */
const PARALLEL = new RegExp(`\\s*,\\s*(?:and\\s+)?(?=${ACTION}\\b)|\\s+and\\s+(?=${ACTION}\\b)`, 'i');
const COMPARE = /^(?:please\s+)?(compare|contrast)\s+(.+?)\s+(?:and|with|to|against|vs\.?|versus)\s+(.+)$/i;
const VERSUS = /^(.+?)\s+(?:vs\.?|versus)\s+(.+?)(?:[:,]\s*(.*))?$/i;
const DIFFERENCE = /^(?:what(?:'s| is| are)\s+)?the\s+differences?\s+between\s+(.+?)\s+and\s+(.+)$/i;

type Step = { descriptions: string[]; comparison?: string };

export function mockDecomposition(query: string): unknown {
  const sentences = query.split(/(?<=[.!?])\s+|\n+/).map(clean).filter((sentence) => sentence.length > 0);
  const steps = (sentences.length > 0 ? sentences : [query.trim() || 'answer the request']).flatMap((sentence, index) => {
    // A sentence that starts with "then" follows the sentence before it; other sentences stand alone.
    const marker = LEADING_SEQUENCE.exec(sentence);
    const parts = sentence.slice(marker?.[0].length ?? 0).split(SEQUENCE).map(clean).filter(Boolean);
    return parts.map((part, partIndex) => ({ part, follows: partIndex > 0 || (index > 0 && marker !== null) }));
  });
  const subtasks: MockSubtask[] = [];
  let previous: string[] = [];
  let pendingComparison: string | undefined;
  for (const { part, follows } of steps) {
    const step = splitStep(part);
    const dependencies = follows || pendingComparison ? previous : [];
    const ids = step.descriptions.map((description) => add(subtasks, description, dependencies));
    if (pendingComparison && !follows) {
      // The comparison before had no step after it to make it: it gets one of its own.
      previous = [add(subtasks, pendingComparison, previous)];
    }
    pendingComparison = step.comparison;
    previous = ids.length > 0 ? ids : previous;
  }
  if (pendingComparison) add(subtasks, pendingComparison, previous);
  const kept = subtasks.slice(0, MAX_SUBTASKS).map((subtask) => ({ ...subtask, dependencies: subtask.dependencies.filter((id) => Number(id.slice(5)) <= MAX_SUBTASKS) }));
  const hasDependencies = kept.some((subtask) => subtask.dependencies.length > 0);
  return {
    complexity_score: kept.length === 1 ? 0.2 : Math.min(0.9, 0.3 + 0.1 * kept.length),
    subtasks: kept,
    execution_strategy: hasDependencies ? 'hybrid' : 'parallel',
    concurrency_limit: 5,
  };
}

function add(subtasks: MockSubtask[], description: string, dependencies: string[]): string {
  const id = `task-${subtasks.length + 1}`;
  subtasks.push({ id, description: capitalise(description), dependencies, suggested_tools: [], tool_parameters: {} });
  return id;
}

/** A step's parallel parts; a comparison becomes one part per thing compared, and the comparison to make after them. */
function splitStep(step: string): Step {
  const compared = comparisonOf(step);
  if (compared) return compared;
  const parts = step.split(PARALLEL).map(clean).filter(Boolean);
  return { descriptions: parts.length > 0 ? parts : [step] };
}

function comparisonOf(step: string): Step | undefined {
  const compare = COMPARE.exec(step);
  if (compare) return compareEach(compare[2], compare[3], step);
  const difference = DIFFERENCE.exec(step);
  if (difference) return compareEach(difference[1], difference[2], step);
  const versus = VERSUS.exec(step);
  if (versus) return compareEach(versus[1], versus[2], step);
  return undefined;
}

/**
 * "the climate of Lisbon" and "Oslo" → "Research the climate of Lisbon", "Research the climate of Oslo": a short
 * second term takes the first one's head ("the climate of"). What the comparison is about ("for a weekend trip")
 * stays with the comparison.
 */
function compareEach(first: string, second: string, whole: string): Step {
  const left = clean(first);
  const [right] = clean(second).replace(/\?+$/, '').split(/\s+(?=(?:for|in terms of|on|by|regarding)\s)/i);
  const head = /^(.*\b(?:of|in|for|from|at|between)\s+)\S/i.exec(left)?.[1];
  const rightTerm = head && right.split(/\s+/).length <= 3 && !right.toLowerCase().startsWith(head.toLowerCase()) ? head + right : right;
  return { descriptions: [`Research ${left}`, `Research ${rightTerm}`], comparison: whole };
}

const clean = (text: string) => text.trim().replace(/^(and|also|please)\s+/i, '').replace(/[.;,:!]+$/, '').trim();
const capitalise = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
