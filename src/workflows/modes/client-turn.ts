import { checkStrictCalls, toOpenAiToolCalls } from '../../openai/client-tools.ts';
import { checkStructuredAnswer, jsonAnswerFormat } from '../../openai/structured-output.ts';
import type { AgentCall } from '../agent-calls/call-agent.ts';
import type { AgentAnswer, TaskSnapshot } from '../runtime/task-snapshot.ts';

/**
 * An OpenAI-layer direct turn (openai/chat-task.ts): the client's conversation as sent, offered only the client's
 * tools (never the gateway's: the calls are the answer, returned to the client to run) and its output format.
 */
export function clientTurnCall(task: TaskSnapshot, call: AgentCall): AgentCall {
  const turn = task.settings.clientTurn;
  if (!turn) return call;
  return {
    ...call,
    messages: turn.messages,
    clientTurn: {
      ...(turn.tools ? { tools: turn.tools, toolChoice: turn.toolChoice } : {}),
      ...(turn.output ? { jsonAnswer: jsonAnswerFormat(turn.output) } : {}),
    },
  };
}


/**
 * What the task keeps of a direct turn's answer: the tool calls the model made (for the client to run), in the
 * task's metadata. A JSON answer, and the calls of `strict` functions, are checked first: a wrong one fails the task,
 * saying what is wrong.
 */
export function clientTurnMetadata(task: TaskSnapshot, answer: AgentAnswer): Record<string, unknown> | undefined {
  const turn = task.settings.clientTurn;
  if (!turn) return undefined;
  const calls = answer.toolCalls ?? [];
  if (calls.length > 0) {
    checkStrictCalls(calls, turn.tools ?? [], turn.strictTools ?? []);
    return { tool_calls: toOpenAiToolCalls(calls, turn.singleToolCall === true) };
  }
  if (turn.output) checkStructuredAnswer(answer.text, turn.output);
  return undefined;
}
