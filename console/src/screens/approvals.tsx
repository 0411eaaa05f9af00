import { useEffect, useState } from 'preact/hooks';
import { api, type ApprovalList } from '../api/client';
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
      {list?.approvals.map((approval) => <ApprovalCard key={(approval as { approval_id: string }).approval_id} approval={approval} onDecided={load} />)}
    </>
  );
}

function ApprovalCard({ approval, onDecided }: { approval: Approval; onDecided: () => Promise<void> }) {
  const item = approval as Record<string, unknown>;
  const approvalId = String(item.approval_id);
  const taskId = String(item.workflow_id ?? item.task_id ?? '');
  const [message, setMessage] = useState('');
  const decide = async (event: SubmitEvent) => {
    event.preventDefault();
    const approved = (event.submitter as HTMLButtonElement | null)?.value === 'approve';
    const feedback = String(new FormData(event.currentTarget as HTMLFormElement).get('feedback') ?? '').trim();
    try {
      await api('POST', '/api/v1/approvals/decision', { workflow_id: taskId, approval_id: approvalId, approved, ...(feedback ? { feedback } : {}) });
      await onDecided();
    } catch (failure) {
      setMessage((failure as Error).message);
    }
  };
  return (
    <form class="card stack" onSubmit={decide} aria-label={`Approval ${approvalId}`}>
      <p><strong>{String(item.action ?? item.reason ?? item.message ?? 'Approval requested')}</strong></p>
      {taskId && <p>Task: <a href={`${BASE}/tasks/${taskId}`} onClick={(e) => onLinkClick(e, `/tasks/${taskId}`)}>{taskId}</a></p>}
      <details><summary>details</summary><pre>{JSON.stringify(item, null, 2)}</pre></details>
      <label>Feedback (optional)<textarea name="feedback" rows={2} /></label>
      <div class="row">
        <button type="submit" name="decision" value="approve">Approve</button>
        <button type="submit" name="decision" value="deny" class="danger">Deny</button>
      </div>
      {message && <p role="alert" class="error">{message}</p>}
    </form>
  );
}
