-- Issue 25: approvals name the tools they let agents call, and who may decide them. `tools`: the dangerous tools
-- the approval covers for the task (a call to any other waits for an approval of its own). `needs_other_approver`:
-- only an approver (APPROVAL_APPROVER_ROLES) other than the requester may approve it — approvals guarding dangerous
-- tools or asked for by a policy rule. `call_key`: set when a tool call inside an agent's loop asked for it.
-- `decided_by` is the deciding user's id from now on; what a client sent as `approved_by` is kept apart, as a note.
ALTER TABLE approvals
  ADD COLUMN tools text[] NOT NULL DEFAULT '{}',
  ADD COLUMN needs_other_approver boolean NOT NULL DEFAULT false,
  ADD COLUMN call_key text,
  ADD COLUMN approved_by_note text;

-- Approvers list the approvals of their whole tenant.
CREATE INDEX approvals_tenant_status_created ON approvals (tenant_id, status, created_at DESC, id DESC);

-- Time the task's agents waited for approvals asked for inside their tool loops (decided or expired ones):
-- not counted against the task's deadline. Kept on the task row, which every agent's opening commit reads,
-- so that a replay after a crash allows for it too.
ALTER TABLE tasks ADD COLUMN approval_wait_ms bigint NOT NULL DEFAULT 0;
