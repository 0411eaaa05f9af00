import { useEffect, useState } from 'preact/hooks';
import { api, type ApprovalList } from '../api/client';
import { formatAge } from '../format';
import { BASE, onLinkClick } from '../router';

type Approval = ApprovalList['approvals'][number];

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
    void load();
    const timer = setInterval(() => void load(), 1500);
    return () => clearInterval(timer);
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
  const taskId = approval.workflow_id;
  const decide = async (event: SubmitEvent) => {
    event.preventDefault();
    const approved = (event.submitter as HTMLButtonElement | null)?.value === 'approve';
    const feedback = String(new FormData(event.currentTarget as HTMLFormElement).get('feedback') ?? '').trim();
    try {
      await api('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approval.approval_id, approved, ...(feedback ? { feedback } : {}) });
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
      {approval.action !== null && approval.action !== undefined && (
        <details><summary>The action</summary><pre>{JSON.stringify(approval.action, null, 2)}</pre></details>
      )}
      <label>Feedback (optional)<textarea name="feedback" rows={2} /></label>
      <div class="row">
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="deny" class="danger">Deny</button>
      </div>
      {message && <p role="alert" class="error">{message}</p>}
    </form>
  );
}
