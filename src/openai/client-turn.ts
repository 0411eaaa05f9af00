import type { ModelMessage } from 'ai';
import type { ModelCallSettings, ModelToolChoice, ModelToolSpec } from '../llm/stream-model-text.ts';
import type { StructuredOutput } from './structured-output.ts';

/**
 * A direct model turn, as both OpenAI layers submit one (chat completions here; the Responses API alike): the
 * conversation exactly as the client sent it, offered only the client's tools (never the gateway's) and its output
 * format. It rides in the task's context (`openai_turn`, set by the server), so it is JSON. The `simple` workflow
 * answers it (workflows/modes/client-turn.ts): the tool calls made land in the task's `metadata.tool_calls`, a JSON
 * answer is checked before the task completes.
 */
export interface ClientTurn {
  messages: ModelMessage[];
  tools?: ModelToolSpec[];
  toolChoice?: ModelToolChoice;
  output?: StructuredOutput;
  /** `parallel_tool_calls: false`: at most one call is passed on. */
  singleToolCall?: boolean;
  /** The functions declared `strict: true`: their calls are checked against their parameters. */
  strictTools?: string[];
}

/** The server context keys of an OpenAI-layer task: the turn (when there is one) and the sampling settings. */
export function clientTurnContext(turn: ClientTurn | undefined, callSettings: ModelCallSettings): Record<string, unknown> {
  return { openai_call_settings: callSettings, ...(turn ? { openai_turn: turn } : {}) };
}
