import { inSpan } from '../../observability/spans.ts';
import type { TaskSnapshot } from '../runtime/task-snapshot.ts';
import type { AgentCall } from './call-agent.ts';

/**
 * One agent's work as a span (OpenTelemetry's GenAI convention for invoking an agent); its model calls and
 * tool calls are its children.
 */
export function inAgentSpan<T>(task: TaskSnapshot, call: AgentCall, work: () => Promise<T>): Promise<T> {
  return inSpan(`invoke_agent ${call.agentId}`, {
    attributes: {
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': call.agentId,
      'agentgate.task.id': task.id,
      ...(call.tools ? { 'agentgate.agent.role': call.tools.role } : {}),
    },
  }, work);
}
