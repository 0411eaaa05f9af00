/**
 * How much stored text (queries, results, errors, event messages) one session answer may carry. Issue S5:
 * an unpaged history answer of 103 MB, ten at once, took the process to 3.7 GB and others' requests to 12 s.
 */
export const PAGE_TEXT_BYTES = 4 * 1024 * 1024;

/**
 * A task too big for a page on its own still comes (a page is never empty), each long text cut to this.
 * Three of them stay under the page budget.
 */
export const FIELD_TEXT_BYTES = 1024 * 1024;

/** Session summaries show the latest query (and make a title from the first) from this many characters. */
export const PREVIEW_CHARACTERS = 1000;

const encoder = new TextEncoder();

/**
 * `text` as fetched (SQL cut it to FIELD_TEXT_BYTES characters), cut to FIELD_TEXT_BYTES bytes between
 * characters, and marked when the stored text (`storedBytes` long) was longer.
 */
export function cutText(text: string, storedBytes: number, taskId: string): string {
  if (storedBytes <= FIELD_TEXT_BYTES) return text;
  const { read, written } = encoder.encodeInto(text, new Uint8Array(FIELD_TEXT_BYTES));
  return `${text.slice(0, read)}\n[truncated: the first ${written} of ${storedBytes} bytes; GET /api/v1/tasks/${taskId} has the whole text]`;
}
