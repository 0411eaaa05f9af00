import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { TaskEvent } from '../api/event-stream';
import { renderMarkdown, type Citation } from '../markdown';
import { lastParagraphBreak } from '../paragraphs';

/**
 * The answer as it streams, drawn without re-reading what is already drawn: events are only ever appended, so the
 * streamed text grows from where it was; the finished paragraphs are rendered once each, and only the paragraph
 * still being written is rendered again. (Parsing and sanitising the whole answer at every frame costs frames once
 * an answer runs to thousands of words.) A paragraph cut from the next can render differently than the whole
 * document would (a list split by a blank line): the stored result, once there, is rendered whole.
 */
export function StreamedAnswer({ events, citations }: { events: TaskEvent[]; citations: readonly Citation[] }) {
  const text = useAppendedText(events);
  const blocks = useFinishedBlocks(text, citations);
  const unfinished = text.slice(blocks.end);
  // A paragraph still being written is rendered at every frame while short, a long one at most every 250 ms.
  const shown = useThrottled(unfinished, unfinished.length < LONG_PARAGRAPH ? 0 : 250);
  const tail = useMemo(() => renderMarkdown(shown, citations), [shown, citations.length]);
  if (!text) return <p class="muted">No answer yet.</p>;
  return (
    <div class="markdown" data-testid="answer">
      {blocks.html.map((html, index) => <div key={index} dangerouslySetInnerHTML={{ __html: html }} />)}
      <div dangerouslySetInnerHTML={{ __html: tail }} />
    </div>
  );
}

const LONG_PARAGRAPH = 4_000;

/** The value, updated at most once per `intervalMs` (at once when the interval is 0). */
function useThrottled<T>(value: T, intervalMs: number): T {
  const [shown, setShown] = useState(value);
  const last = useRef(0);
  useEffect(() => {
    const wait = last.current + intervalMs - Date.now();
    if (wait <= 0) {
      last.current = Date.now();
      setShown(value);
      return;
    }
    const timer = setTimeout(() => { last.current = Date.now(); setShown(value); }, wait);
    return () => clearTimeout(timer);
  }, [value, intervalMs]);
  return intervalMs === 0 ? value : shown;
}

/** The final answer's deltas joined, reading only the events that arrived since the last call. */
function useAppendedText(events: TaskEvent[]): string {
  const read = useRef({ count: 0, text: '' });
  if (events.length < read.current.count) read.current = { count: 0, text: '' };
  let { text } = read.current;
  for (let index = read.current.count; index < events.length; index++) {
    const event = events[index];
    if (event.type === 'LLM_PARTIAL' && event.payload?.final_answer === true) text += event.message ?? '';
  }
  read.current = { count: events.length, text };
  return text;
}

/** Rendered paragraphs before the last blank line outside a code fence, each rendered once. */
function useFinishedBlocks(text: string, citations: readonly Citation[]): { end: number; html: string[] } {
  const blocks = useRef({ end: 0, html: [] as string[], citations: citations.length });
  if (text.length < blocks.current.end || citations.length !== blocks.current.citations) blocks.current = { end: 0, html: [], citations: citations.length };
  const end = lastParagraphBreak(text);
  if (end > blocks.current.end) {
    blocks.current = { ...blocks.current, end, html: [...blocks.current.html, renderMarkdown(text.slice(blocks.current.end, end), citations)] };
  }
  return blocks.current;
}
