import { Type } from 'typebox';

/** Feedback messages are at most this many bytes of UTF-8 (spec 4.3: 10 KB). */
export const MAX_FEEDBACK_BYTES = 10 * 1024;

export const ReviewBody = Type.Object({
  action: Type.Enum(['feedback', 'approve'], { description: '`feedback` sends a message to the planner; `approve` starts the research with the current plan' }),
  message: Type.Optional(Type.String({ description: 'the feedback (required with `feedback`, at most 10 KB)' })),
}, { additionalProperties: false });

const ReviewTurn = Type.Object({
  role: Type.Enum(['assistant', 'user']),
  message: Type.String(),
  timestamp: Type.String({ format: 'date-time' }),
});

/** Spec 2.13. `timed_out`: nobody approved the plan in time and the task failed; the state is kept for a while after. */
export const ReviewState = Type.Object({
  status: Type.Enum(['reviewing', 'approved', 'timed_out']),
  round: Type.Integer({ minimum: 1 }),
  version: Type.Integer({ minimum: 1 }),
  current_plan: Type.String({ description: 'the latest plan the planner called ready; empty while it only asked questions' }),
  rounds: Type.Array(ReviewTurn),
  query: Type.String(),
});

/**
 * Spec 4.3's answer (`status`, `plan`), with the review's state after the round beside it (`round`, `version`,
 * `current_plan`, `rounds`, `query`, as a read gives them): Shannon's Python SDK reads those from this answer.
 */
export const FeedbackResponse = Type.Object({
  ...ReviewState.properties,
  status: Type.Literal('reviewing'),
  plan: Type.Object({
    message: Type.String(),
    round: Type.Integer(),
    version: Type.Integer(),
    intent: Type.Enum(['feedback', 'ready', 'execute']),
  }),
});

export const ApproveResponse = Type.Object({ status: Type.Literal('approved'), message: Type.String() });
