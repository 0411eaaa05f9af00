/**
 * The events a subscription may ask for (issue 34). The database enqueues them (migration 0030) in the transaction
 * that makes them happen: a task ending, a task event asking for a person or warning of spend, a schedule pausing.
 */
export const WEBHOOK_EVENTS = [
  'task.completed', 'task.failed', 'task.cancelled', 'task.timed_out',
  'approval.requested', 'review.plan_ready', 'schedule.paused', 'budget.threshold',
] as const;
export type WebhookEvent = typeof WEBHOOK_EVENTS[number];

/** What a task's own webhook (its submission's `webhook_url`) is sent: everything about that task. */
export const TASK_WEBHOOK_EVENTS: readonly WebhookEvent[] = WEBHOOK_EVENTS.filter((event) => event !== 'schedule.paused');
