import type { ConversationMessage, ModelCallSettings } from '../../llm/stream-model-text.ts';
import type { ClientTurn } from '../../openai/client-turn.ts';
import type { ModelSelection } from '../../llm/select-models.ts';
import { DEFAULT_ROLE } from '../agent-calls/role-presets.ts';
import { readHistorySettings, type HistorySettings } from '../memory/history-settings.ts';
import { pinnedSkillOf, type PinnedSkill } from '../modes/skill/pinned-skill.ts';

/**
 * What the workflow reads of a task's context and options, parsed once when the task starts. The types were
 * checked at submission (tasks/schemas.ts); keys the server sets itself (the OpenAI layer's conversation)
 * cannot come from a client (tasks/submit-task.ts).
 */
export interface TaskSettings {
  role: string;
  /** True when the client chose the role: the task then runs as one agent with that role's tools. */
  roleAssigned: boolean;
  systemPrompt: string | undefined;
  promptParams: Record<string, unknown>;
  models: ModelSelection;
  maxOutputTokens: number | undefined;
  /** The OpenAI layer's request carries its own conversation instead of the session's history. */
  conversation: ConversationMessage[] | undefined;
  /** An OpenAI-layer request answered by one direct model turn: its messages, client tools and output format. */
  clientTurn: ClientTurn | undefined;
  /** An OpenAI-layer request's sampling settings (temperature, top_p, stop, …), sent with every agent call. */
  callSettings: ModelCallSettings | undefined;
  template: { name: string; version: string | undefined } | undefined;
  /** The skill the task runs (workflows/modes/skill/), pinned at submission. */
  skill: PinnedSkill | undefined;
  /** `context.force_research`: the research workflow runs (workflows/modes/research/). */
  forceResearch: boolean;
  /** `context.agent`: the single-purpose agent the task runs (workflows/modes/named-agent/). */
  agent: string | undefined;
  /** `context.force_swarm`: the swarm workflow runs (workflows/modes/swarm/), when the deployment has it on. */
  forceSwarm: boolean;
  disableAi: boolean;
  requireApproval: boolean;
  /** The policy rule that requires approval of this task (set by the server at submission). */
  approvalRule: string | undefined;
  maxConcurrentAgents: number | undefined;
  /** The session history's window and compression (spec 2.2). */
  history: HistorySettings;
  mock: MockScript;
}

/** Per-task scripting of the mock provider (issue 14, scope 9); real providers ignore it. */
export interface MockScript {
  delayMs: number | undefined;
  answerWords: number | undefined;
  /** The plan the mock's decomposition returns instead of one derived from the query. */
  plan: unknown;
  /** Tool calls the mock makes, in order, when an agent runs its tool loop. */
  toolCalls: unknown[] | undefined;
  /** Per subtask id: how many of its first attempts fail. */
  failures: Record<string, number>;
}

type Context = Record<string, unknown>;

export function parseTaskSettings(context: Context, options: Record<string, unknown>): TaskSettings {
  const template = stringOf(context.template);
  return {
    role: stringOf(context.role) ?? DEFAULT_ROLE,
    roleAssigned: stringOf(context.role) !== undefined,
    systemPrompt: stringOf(context.system_prompt),
    promptParams: (context.prompt_params ?? {}) as Record<string, unknown>,
    models: {
      modelTier: context.model_tier as ModelSelection['modelTier'],
      modelOverride: stringOf(context.model_override),
      providerOverride: stringOf(context.provider_override),
    },
    maxOutputTokens: numberOf(context.max_output_tokens),
    conversation: Array.isArray(context.conversation_history) ? context.conversation_history as ConversationMessage[] : undefined,
    clientTurn: isObject(context.openai_turn) ? context.openai_turn as unknown as ClientTurn : undefined,
    callSettings: isObject(context.openai_call_settings) ? context.openai_call_settings as ModelCallSettings : undefined,
    template: template === undefined ? undefined : { name: template, version: stringOf(context.template_version) },
    skill: pinnedSkillOf(options.skill),
    forceResearch: context.force_research === true,
    agent: typeof context.agent === 'string' ? context.agent : undefined,
    forceSwarm: context.force_swarm === true,
    disableAi: context.disable_ai === true,
    requireApproval: context.require_approval === true || options.approval_rule !== undefined,
    approvalRule: stringOf(options.approval_rule),
    // Top-level in the spec, a context key in the reference's SDK: both are read, the top-level one winning.
    maxConcurrentAgents: numberOf(options.max_concurrent_agents ?? context.max_concurrent_agents),
    history: readHistorySettings(context),
    mock: {
      delayMs: numberOf(context.mock_delay_ms),
      answerWords: numberOf(context.mock_answer_words),
      plan: context.mock_plan,
      toolCalls: Array.isArray(context.mock_tool_calls) ? context.mock_tool_calls : undefined,
      failures: (context.mock_failures ?? {}) as Record<string, number>,
    },
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const stringOf = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);
const numberOf = (value: unknown) => (typeof value === 'number' ? value : undefined);
