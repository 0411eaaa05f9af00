import type { Deps } from '../../deps.ts';
import { callModelWithinBudget } from '../agent-calls/budgeted-call.ts';
import { estimateTokens, taskModelSelection } from '../agent-calls/model-call.ts';
import type { HistoryMessage } from './session-history.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';

export const COMPRESSOR_AGENT_ID = 'context_compressor';

export interface CompressionRequest {
  /** The summary this one extends, if the session has one. */
  earlierSummary: string | undefined;
  messages: HistoryMessage[];
  summaryTokens: number;
  /** The most conversation one call may read, so that every call fits the model's window. */
  chunkTokens: number;
  /** Usage rows are keyed by it and the chunk's index, stable across a step's re-run. */
  callKey: string;
}

/**
 * Folds the messages into the running summary a chunk at a time (one model call per chunk); undefined when
 * a token budget is spent.
 */
export async function summariseConversation(deps: Deps, task: TaskSnapshot, request: CompressionRequest, cancel: AbortSignal): Promise<string | undefined> {
  let summary = request.earlierSummary ?? '';
  const chunks = chunkTranscript(request.messages, request.chunkTokens);
  for (const [index, chunk] of (chunks.length > 0 ? chunks : [[]]).entries()) {
    const outcome = await callModelWithinBudget(deps, task, {
      agentId: COMPRESSOR_AGENT_ID,
      callKey: `${request.callKey}:c${index}`,
      request: {
        selection: taskModelSelection(task),
        system: instructions(request.summaryTokens),
        messages: [{ role: 'user', content: `Summary so far:\n${summary || '(none)'}\n\nMessages to fold in:\n${chunk.join('\n\n')}` }],
        mockOptions: { purpose: undefined },
      },
      maxOutputTokens: request.summaryTokens,
      // The answer does not need the summary: a spent budget leaves it out (issue 5), and the agent meets the policy.
      onSpentBudget: 'report',
    }, cancel);
    if (!('result' in outcome)) return undefined;
    summary = outcome.result.text.trim();
  }
  return summary;
}

export const instructionTokens = (summaryTokens: number) => estimateTokens(instructions(summaryTokens));

function instructions(summaryTokens: number): string {
  return 'You condense the earlier part of a conversation so that it can continue without it. Merge the summary so far '
    + `and the new messages into one summary of at most about ${summaryTokens} tokens. Keep facts, names, numbers, `
    + "decisions, the user's goals and preferences, and open questions; drop pleasantries. Write in the language of "
    + 'the conversation. Answer with the summary only.';
}

/** Consecutive messages grouped up to `chunkTokens`; a single longer message is cut to fit. */
function chunkTranscript(messages: HistoryMessage[], chunkTokens: number): string[][] {
  const chunks: string[][] = [];
  let current: string[] = [];
  let size = 0;
  for (const message of messages) {
    const line = `${message.role === 'user' ? 'User' : 'Assistant'}: ${message.content}`.slice(0, chunkTokens * 4);
    const tokens = estimateTokens(line);
    if (current.length > 0 && size + tokens > chunkTokens) {
      chunks.push(current);
      current = [];
      size = 0;
    }
    current.push(line);
    size += tokens;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
}
