import { parentPort, threadId } from 'node:worker_threads';
import { cutText } from './cut-text.ts';
import { extractContent, type Body, type ExtractedContent } from './extract-content.ts';
import { allowedByRobots, type RobotsQuestion } from './robots-verdicts.ts';

/**
 * A parse worker (parse-pool.ts runs it in a thread of its pool): everything the tools read from the network is
 * parsed here, off the gateway's event loop, under the pool's time and memory limits.
 */
export type ParseJob = { kind: 'content'; body: Body; maxLength: number } | { kind: 'robots'; question: RobotsQuestion };
/** The content cut here at `maxLength` characters: only that much travels back to the event loop. */
export type ReadContent = ExtractedContent & { truncated: boolean };
export type ParseResult<J extends ParseJob> = J extends { kind: 'content' } ? ReadContent : string[];

export interface ParseTask { id: number; job: ParseJob }
/**
 * What a job says while it runs: that it started (its time limit runs from there, not from its wait in the
 * queue), and the reading to answer with if the article reader is stopped at a limit.
 */
export type ParseMessage = { parseStarted: number; threadId: number } | { parseFallback: number; content: ReadContent };

export default async function parse({ id, job }: ParseTask): Promise<ReadContent | string[]> {
  const tell = (message: ParseMessage) => parentPort!.postMessage(message);
  tell({ parseStarted: id, threadId });
  if (job.kind === 'robots') return allowedByRobots(job.question);
  const cut = (content: ExtractedContent): ReadContent => ({ ...content, ...cutText(content.content, job.maxLength) });
  try {
    return cut(await extractContent(job.body, (fallback) => tell({ parseFallback: id, content: cut(fallback) })));
  } finally {
    // The body (up to TOOLS_FETCH_MAX_BYTES) was moved here for this job alone: given back now, not whenever
    // this thread next collects garbage, so that pages read one after another do not pile up.
    const bytes = job.body.bytes.buffer as ArrayBuffer;
    if (!bytes.detached) bytes.transfer(0);
  }
}
