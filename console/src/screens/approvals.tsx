import { useEffect, useState } from 'preact/hooks';
import { api, type ApprovalList } from '../api/client';
import { formatAge } from '../format';
import { BASE, onLinkClick } from '../router';
import { isShownPlan, PlanEditor, type EditedPlan } from './plan-editor';

type Approval = ApprovalList['approvals'][number];

/** A new approval shows within this (the issue asks for 2 s). */
const POLL_MS = 1500;

export function ApprovalsScreen() {
  const [list, setList] = useState<ApprovalList | null>(null);
  const [error, setError] = useState('');
  const load = async () => {
    try {
      setList(await api<ApprovalList>('GET', '/api/v1/approvals?status=pending&limit=50'));
    } catch (failure) {
      setError((failure as Error).message);
    }
  };
  useEffect(() => {
    // One poll at a time, slower in a hidden tab: the polls count against the person's rate limit.
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      await load();
      if (!stopped) timer = setTimeout(poll, document.hidden ? POLL_MS * 5 : POLL_MS);
    };
    void poll();
    return () => { stopped = true; clearTimeout(timer); };
  }, []);
  return (
    <>
      <h1>Approvals</h1>
      {error && <p role="alert" class="error">{error}</p>}
      {list && list.approvals.length === 0 && <p>Nothing is waiting for a decision.</p>}
      {list?.approvals.map((approval) => <ApprovalCard key={approval.approval_id} approval={approval} onDecided={load} />)}
    </>
  );
}

function ApprovalCard({ approval, onDecided }: { approval: Approval; onDecided: () => Promise<void> }) {
  const [message, setMessage] = useState('');
  const [editing, setEditing] = useState(false);
  const [edited, setEdited] = useState<EditedPlan | string | undefined>(undefined);
  const taskId = approval.workflow_id;
  const plan = isShownPlan(approval.action) ? approval.action : undefined;
  const decide = async (event: SubmitEvent) => {
    event.preventDefault();
    const approved = (event.submitter as HTMLButtonElement | null)?.value === 'approve';
    const feedback = String(new FormData(event.currentTarget as HTMLFormElement).get('feedback') ?? '').trim();
    // An unchanged plan is not sent back: the one the task planned runs, with its full descriptions.
    const modified = approved && editing && edited !== undefined ? edited : undefined;
    // Why is already shown under the editor.
    if (typeof modified === 'string') return;
    try {
      await api('POST', '/api/v1/approvals/decision', {
        workflow_id: taskId, approval_id: approval.approval_id, approved, ...(feedback ? { feedback } : {}), ...(modified ? { modified_action: modified } : {}),
      });
      await onDecided();
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  const titleId = `approval-${approval.approval_id}`;
  return (
    <form class="card stack" onSubmit={decide} aria-labelledby={titleId} data-approval-id={approval.approval_id}>
      <h2 id={titleId}>{approval.reason}</h2>
      <p>Task: <a href={`${BASE}/tasks/${taskId}`} onClick={(e) => onLinkClick(e, `/tasks/${taskId}`)}>{taskId}</a>
        {' · '}asked <time dateTime={approval.created_at}>{formatAge(approval.created_at)}</time>
        {approval.tools.length > 0 && <> · tools: {approval.tools.join(', ')}</>}
        {approval.needs_other_approver && <> · needs another approver</>}</p>
      {approval.action !== null && approval.action !== undefined && !editing && (
        <details><summary>The action</summary><pre>{JSON.stringify(approval.action, null, 2)}</pre></details>
      )}
      {plan && !editing && <div class="row"><button type="button" onClick={() => setEditing(true)}>Edit the plan</button></div>}
      {plan && editing && <PlanEditor plan={plan} onChange={setEdited} />}
      {editing && typeof edited === 'string' && <p class="error" role="status">The edited plan cannot run: {edited}</p>}
      <label>Feedback (optional)<textarea name="feedback" rows={2} /></label>
      <div class="row">
        <button type="submit" name="decision" value="approve">{editing && edited !== undefined ? 'Approve the edited plan' : 'Approve'}</button>
        <button type="submit" name="decision" value="deny" class="danger">Deny</button>
      </div>
      {message && <p role="alert" class="error">{message}</p>}
    </form>
  );
}
