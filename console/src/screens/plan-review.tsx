import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, type Answer } from '../api/client';
import type { TaskEvent } from '../api/event-stream';
import { renderMarkdown } from '../markdown';

type Review = Answer<'/api/v1/tasks/{id}/review', 'get'>;
/** Events after which the review reads differently. */
const REVIEW_EVENTS = new Set(['RESEARCH_PLAN_READY', 'RESEARCH_PLAN_UPDATED', 'REVIEW_USER_FEEDBACK', 'RESEARCH_PLAN_APPROVED']);

/**
 * The review of a research plan (spec 2.13, 4.3): the planner's drafts and the owner's feedback as a conversation,
 * a box for the next round and the approval. Every answer sends the version it was read at (If-Match), so a plan
 * changed in another tab is refused (409) and read again rather than approved unseen.
 */
export function PlanReview({ taskId, events }: { taskId: string; events: TaskEvent[] }) {
  const [review, setReview] = useState<Review | null>(null);
  const [busy, setBusy] = useState<'' | 'feedback' | 'approve'>('');
  const [message, setMessage] = useState('');
  const [draft, setDraft] = useState('');
  const reviewEvents = events.filter((event) => REVIEW_EVENTS.has(event.type)).length;

  const load = async () => {
    try {
      setReview(await api<Review>('GET', `/api/v1/tasks/${encodeURIComponent(taskId)}/review`));
    } catch (failure) {
      // 404 until the planner's first draft is written (and after the review's retention).
      if (!(failure instanceof ApiError && failure.status === 404)) setMessage((failure as Error).message);
    }
  };
  useEffect(() => { void load(); }, [taskId, reviewEvents]);
  if (!review) return null;

  const send = async (action: 'feedback' | 'approve') => {
    setBusy(action);
    setMessage(action === 'feedback' ? 'The planner is revising the plan…' : '');
    try {
      await api('POST', `/api/v1/tasks/${encodeURIComponent(taskId)}/review`, action === 'feedback' ? { action, message: draft } : { action },
        { 'If-Match': String(review.version) });
      if (action === 'feedback') setDraft('');
      setMessage(action === 'feedback' ? 'Feedback sent; the plan is updated.' : 'Plan approved; the research starts.');
    } catch (failure) {
      setMessage((failure as Error).message);
    }
    setBusy('');
    await load();
  };
  const reviewing = review.status === 'reviewing';
  return (
    <section class="card" aria-labelledby="review-title" data-testid="plan-review" data-review-status={review.status} data-review-version={review.version}>
      <h2 id="review-title">Research plan review <span class="muted">(round {review.round}, {review.status})</span></h2>
      <ol class="conversation">
        {review.rounds.map((turn, index) => (
          <li key={index} class={`turn ${turn.role}`} data-role={turn.role}>
            <strong>{turn.role === 'assistant' ? 'Planner' : 'You'}</strong>
            {turn.role === 'assistant'
              ? <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(turn.message) }} />
              : <p>{turn.message}</p>}
          </li>
        ))}
      </ol>
      {reviewing && (
        <form class="stack" onSubmit={(event) => { event.preventDefault(); void send('feedback'); }}>
          <label>Feedback for the planner<textarea name="feedback" rows={3} maxLength={10_000} value={draft} onInput={(event) => setDraft((event.currentTarget as HTMLTextAreaElement).value)} /></label>
          <div class="row wrap">
            <button type="submit" disabled={busy !== '' || draft.trim() === ''}>Send feedback</button>
            <button type="button" disabled={busy !== '' || review.current_plan === ''} onClick={() => void send('approve')}>Approve the plan</button>
            {review.current_plan === '' && <span class="hint">The planner has questions: answer them to get a plan to approve.</span>}
          </div>
        </form>
      )}
      <p role="status" class="muted">{message}</p>
    </section>
  );
}
