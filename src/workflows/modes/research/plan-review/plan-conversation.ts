import type { ModelMessage } from 'ai';
import type { ReviewTurn } from '../../../../db/schema.ts';

/** Feedback rounds end here: the round counter (the first plan is round 1) reaches this, then only approval is taken (spec 3.2). */
export const MAX_REVIEW_ROUNDS = 10;
export const PLANNER_AGENT_ID = 'research-planner';

/** `feedback`: the planner asks the user something; `ready`: the plan can run; `execute`: the planner thinks the user may start it (a hint only). */
export type PlanIntent = 'feedback' | 'ready' | 'execute';

export interface PlanReply {
  /** What the user reads: the reply without its machine tags. */
  message: string;
  intent: PlanIntent;
  /** A brief for the researchers, when the planner wrote one. */
  brief: string | undefined;
}

const INTENT_TAG = /\[INTENT:\s*(feedback|ready|execute)\s*\]/gi;
const BRIEF_BLOCK = /\[RESEARCH_BRIEF\]([\s\S]*?)\[\/RESEARCH_BRIEF\]/i;

const PLANNER_SYSTEM = [
  'You plan web research together with the person who asked for it, before any research starts.',
  'Propose a short plan: the questions the research will answer, the areas it covers in order of priority, the kinds of',
  'sources it will read, and what the final report will contain. When the request is ambiguous, ask at most three',
  'clarifying questions instead. When the person answers or asks for changes, revise the plan accordingly.',
  'You may add a one-paragraph brief for the researchers between [RESEARCH_BRIEF] and [/RESEARCH_BRIEF].',
  'End every reply with exactly one tag: [INTENT:feedback] when you are asking the person something,',
  '[INTENT:ready] when the plan can run as it stands.',
].join(' ');

const FINAL_ROUND_NOTE = 'This is the last round of review: do not ask anything more; commit to a plan that can run as it stands and end with [INTENT:ready].';

/** What the planner is sent: the question first, then the review's turns so far (the latest user feedback last). */
export function planConversation(query: string, turns: readonly ReviewTurn[], finalRound: boolean): { system: string; messages: ModelMessage[] } {
  return {
    system: finalRound ? `${PLANNER_SYSTEM}\n${FINAL_ROUND_NOTE}` : PLANNER_SYSTEM,
    messages: [
      { role: 'user', content: `## Question\n${query.trim()}\n` },
      ...turns.map((turn): ModelMessage => (turn.role === 'assistant'
        ? { role: 'assistant', content: turn.message }
        : { role: 'user', content: `## Feedback\n${turn.message.trim()}\n` })),
    ],
  };
}

/**
 * Splits the planner's reply into what the user reads, its intent (the last tag; `feedback` when there is none)
 * and its brief. In the final round a question is not allowed any more: its intent reads `ready`.
 */
export function parsePlanReply(text: string, finalRound: boolean): PlanReply {
  const tags = [...text.matchAll(INTENT_TAG)];
  const tagged = (tags.at(-1)?.[1]?.toLowerCase() ?? 'feedback') as PlanIntent;
  const brief = BRIEF_BLOCK.exec(text)?.[1]?.trim();
  const message = text.replace(BRIEF_BLOCK, '').replace(INTENT_TAG, '').replace(/\n{3,}/g, '\n\n').trim();
  return { message, intent: finalRound && tagged === 'feedback' ? 'ready' : tagged, brief: brief || undefined };
}

/** Whether the round that a reply creates is the last one feedback may reach. */
export const isFinalRound = (round: number) => round >= MAX_REVIEW_ROUNDS;
