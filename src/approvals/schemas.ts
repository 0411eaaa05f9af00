import { Type } from 'typebox';

const Nullable = <T extends ReturnType<typeof Type.String>>(schema: T) => Type.Union([schema, Type.Null()]);

/**
 * Spec 2.14. The decision is always the authenticated caller's (spec: `approved_by` defaults to them); a sent
 * `approved_by` is kept beside it as a note, never as who decided. `run_id` is echoed (our runs are the workflow).
 */
export const DecisionBody = Type.Object({
  workflow_id: Type.String({ format: 'uuid', description: 'the task id' }),
  approval_id: Type.String({ format: 'uuid' }),
  approved: Type.Boolean(),
  feedback: Type.Optional(Type.String({ maxLength: 10_000 })),
  modified_action: Type.Optional(Type.Unknown({ description: 'any JSON: the action as the approver changed it' })),
  run_id: Type.Optional(Type.String({ maxLength: 200 })),
  approved_by: Type.Optional(Type.String({
    minLength: 1, maxLength: 200, description: 'a note kept with the decision (approved_by_note); who decided is the authenticated caller',
  })),
});

export const DecisionResponse = Type.Object({
  status: Type.String(),
  success: Type.Boolean(),
  message: Type.String(),
  workflow_id: Type.String(),
  run_id: Type.String(),
  approval_id: Type.String(),
});

const APPROVAL_STATUS_FILTERS = ['pending', 'approved', 'denied', 'all'] as const;

export const ListApprovalsQuery = Type.Object({
  status: Type.Enum([...APPROVAL_STATUS_FILTERS], { default: 'pending' }),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
});

export const ApprovalView = Type.Object({
  approval_id: Type.String(),
  workflow_id: Type.String(),
  requested_by: Type.String({ description: 'the id of the user whose task asks' }),
  status: Type.Enum(['pending', 'approved', 'denied']),
  reason: Type.String(),
  action: Type.Unknown(),
  tools: Type.Array(Type.String(), { description: 'the tools the approval lets the task\'s agents call' }),
  needs_other_approver: Type.Boolean({ description: 'only an approver other than the requester may approve it' }),
  modified_action: Type.Unknown(),
  feedback: Nullable(Type.String()),
  decided_by: Nullable(Type.String({ description: 'the deciding user\'s id (`system` for an expiry)' })),
  approved_by_note: Nullable(Type.String({ description: 'what the decider sent as approved_by' })),
  created_at: Type.String(),
  expires_at: Type.String(),
  decided_at: Nullable(Type.String()),
});

export const ListApprovalsResponse = Type.Object({
  approvals: Type.Array(ApprovalView),
  total: Type.Integer(),
});
