import { badRequest } from '../errors.ts';
import type { Db } from '../db/database.ts';
import { seqAtMost, seqAtStreamId } from './read-events.ts';

/**
 * `last_event_id` / `Last-Event-ID` (spec 4.5): a stream id `<ms>-<n>` or a numeric seq. Returns the seq
 * after which to replay; no resume point replays from the start. A seq past the end of the log follows from its
 * end, as Shannon goes live from the newest entry when nothing matched: waiting for that seq would also skip
 * STREAM_END, so the stream would never end.
 */
export async function resolveResumeSeq(db: Db, taskId: string, lastEventId: string | undefined): Promise<number> {
  const value = lastEventId?.trim();
  if (!value) return 0;
  const invalid = badRequest(`invalid last_event_id: ${value} (expected a stream id like 1700000000000-0 or a seq number)`);
  if (/^\d{1,10}$/.test(value)) return seqAtMost(db, taskId, withinSeqRange(Number(value), invalid));
  const match = /^(\d{1,16})-(\d{1,10})$/.exec(value);
  if (!match || Number(match[1]) > Number.MAX_SAFE_INTEGER) throw invalid;
  return seqAtStreamId(db, taskId, Number(match[1]), withinSeqRange(Number(match[2]), invalid));
}

/** Seqs are Postgres integers: a larger number would fail in the query, not name the bad field. */
const MAX_SEQ = 2_147_483_647;

function withinSeqRange(seq: number, invalid: Error): number {
  if (seq > MAX_SEQ) throw invalid;
  return seq;
}
