import { Type, type Static } from 'typebox';

/** The four things an agent can do with a turn (reference §1.10, `/agent/loop`). */
export const AGENT_ACTIONS = ['tool_call', 'publish_data', 'send_message', 'idle'] as const;

/** One agent turn's answer: the action and the fields that action uses. */
export const AgentActionSchema = Type.Object({
  action: Type.Enum(AGENT_ACTIONS),
  reasoning: Type.Optional(Type.String()),
  /** tool_call */
  tool: Type.Optional(Type.String()),
  args: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** send_message: a teammate's name or `lead` */
  to: Type.Optional(Type.String()),
  message: Type.Optional(Type.String()),
  /** publish_data */
  topic: Type.Optional(Type.String()),
  data: Type.Optional(Type.String()),
  /** idle: what the agent found, for the lead and the synthesis */
  key_findings: Type.Optional(Type.String()),
});
export type AgentAction = Static<typeof AgentActionSchema>;

export const LEAD_ACTIONS = ['revise_plan', 'spawn_agent', 'assign_task', 'send_message', 'broadcast', 'shutdown_agent', 'interim_reply', 'file_read', 'noop', 'done'] as const;

const PlannedTask = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 32 }),
  description: Type.String({ minLength: 1 }),
  depends_on: Type.Optional(Type.Array(Type.String())),
});

/** One lead action: its type and the fields that type uses. */
export const LeadActionSchema = Type.Object({
  type: Type.Enum(LEAD_ACTIONS),
  /** revise_plan: tasks to add (or describe anew) */
  tasks: Type.Optional(Type.Array(PlannedTask)),
  /** revise_plan: task ids to cancel */
  cancel: Type.Optional(Type.Array(Type.String())),
  /** spawn_agent, shutdown_agent, assign_task: the agent's name; send_message: the recipient */
  name: Type.Optional(Type.String()),
  role: Type.Optional(Type.String()),
  /** spawn_agent: the tier of the agent's model (small, medium, large) */
  model_tier: Type.Optional(Type.String()),
  /** spawn_agent, assign_task: the task id it works on */
  task_id: Type.Optional(Type.String()),
  to: Type.Optional(Type.String()),
  /** send_message, broadcast; interim_reply: what the user is told while the team works */
  message: Type.Optional(Type.String()),
  /** file_read: paths in the session workspace to read before deciding */
  paths: Type.Optional(Type.Array(Type.String())),
  /** done: the lead's own reply, instead of a synthesis of the findings */
  reply: Type.Optional(Type.String()),
});
export type LeadAction = Static<typeof LeadActionSchema>;

export const LeadDecisionSchema = Type.Object({
  reasoning: Type.String(),
  actions: Type.Array(LeadActionSchema, { maxItems: 40 }),
});
export type LeadDecision = Static<typeof LeadDecisionSchema>;
