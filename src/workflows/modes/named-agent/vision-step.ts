import path from 'node:path';
import type { Deps } from '../../../deps.ts';
import { readWorkspaceFile } from '../../../tools/files/workspace-store.ts';
import { runSingleCall } from '../../agent-calls/call-agent.ts';
import type { AgentAnswer, TaskSnapshot } from '../../runtime/task-snapshot.ts';
import type { AgentDefinition } from './agent-file.ts';
import type { ToolResult } from './agent-run.ts';

const MEDIA_TYPES: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.gif': 'image/gif', '.webp': 'image/webp' };
const DEFAULT_SYSTEM = 'You are an advertising analyst looking at an image. Describe only what it shows, then answer the request precisely.';

/** The model usage of the vision calls, summed, in the shape of an answer (model and provider of the last call). */
type Usage = Omit<AgentAnswer, 'agentId' | 'text'>;

/**
 * The model step of a vision agent: each image its tool saved in the session workspace (`path` in the tool's
 * output) goes to a vision-capable model (the agent's `model_tier`) with the agent's prompt and the input; the
 * answer joins the tool's output as `analysis`. Each call goes through the one agent-call path (budgets, usage).
 */
export async function lookAtImages(deps: Deps, task: TaskSnapshot, agent: AgentDefinition, results: ToolResult[], cancel: AbortSignal): Promise<{ results: ToolResult[]; usage: Usage }> {
  const usage: Usage = { model: 'none', provider: 'agent', inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, cacheWriteTokens: 0, costUsd: 0, attempts: 0 };
  const seen: ToolResult[] = [];
  for (const [index, result] of results.entries()) {
    if (!result.ok) {
      seen.push(result);
      continue;
    }
    const answer = await lookAtImage(deps, task, agent, result, `agent:${agent.id}:vision#${index}`, cancel);
    Object.assign(usage, { model: answer.model, provider: answer.provider, attempts: usage.attempts + answer.attempts });
    usage.inputTokens += answer.inputTokens;
    usage.cachedInputTokens += answer.cachedInputTokens;
    usage.cacheWriteTokens += answer.cacheWriteTokens;
    usage.outputTokens += answer.outputTokens;
    usage.costUsd += answer.costUsd;
    seen.push({ ...result, output: { ...(result.output as object), analysis: answer.text, model: answer.model } });
  }
  return { results: seen, usage };
}

async function lookAtImage(deps: Deps, task: TaskSnapshot, agent: AgentDefinition, result: Extract<ToolResult, { ok: true }>, stepKey: string, cancel: AbortSignal): Promise<AgentAnswer> {
  const imagePath = (result.output as { path?: unknown }).path;
  if (typeof imagePath !== 'string') throw new Error(`agent ${agent.id}: tool ${agent.tool} saved no image to look at`);
  const file = await readWorkspaceFile(deps.db, { sessionId: task.sessionId, tenantId: task.tenantId }, imagePath);
  if (!file) throw new Error(`agent ${agent.id}: the image ${imagePath} is no longer in the session workspace`);
  const vision = agent.vision!;
  const outcome = await runSingleCall(deps, task, {
    agentId: agent.id,
    system: vision.system ?? DEFAULT_SYSTEM,
    modelTier: vision.model_tier,
    messages: [{
      role: 'user',
      content: [
        { type: 'text', text: `${vision.prompt}\n\nInput: ${JSON.stringify(result.args)}` },
        { type: 'image', image: file.content, mediaType: MEDIA_TYPES[path.extname(imagePath).toLowerCase()] ?? 'image/png' },
      ],
    }],
    onSpentBudget: { waitAt: agent.id },
  }, stepKey, cancel);
  if (!('answer' in outcome)) throw new Error(`agent ${agent.id}: the token budget is spent`);
  return outcome.answer;
}
