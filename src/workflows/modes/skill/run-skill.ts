import type { Deps } from '../../../deps.ts';
import { appendEvents } from '../../../task-state/change-task.ts';
import { runBudgetedAgent } from '../../agent-calls/budgeted-agent.ts';
import type { AgentCall } from '../../agent-calls/call-agent.ts';
import { roleToolSet } from '../../agent-calls/role-tools.ts';
import { buildSystemPrompt } from '../../agent-calls/system-prompt.ts';
import type { AgentTools } from '../../agent-calls/tool-loop.ts';
import { prepareSessionContext, withConversationSummary, type SessionContext } from '../../memory/session-context.ts';
import { passApprovalGate } from '../../runtime/approval-gate.ts';
import { approvalNeed, recordedApprovalNeed, type ApprovalNeed } from '../../runtime/approval-need.ts';
import { checkpoint } from '../../runtime/checkpoint.ts';
import type { TaskOutcome } from '../../runtime/task-lifecycle.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import { runTaskStep } from '../../runtime/task-step.ts';
import { ownConversation } from '../simple.ts';
import type { PinnedSkill } from './pinned-skill.ts';

export const SKILL_MODE = 'skill';
export const SKILL_AGENT_ID = 'skill-agent';

/**
 * A skill task (spec 1: a markdown-defined single-agent workflow): no planning call; one agent whose instructions
 * are the skill's content, with the tools of the task's role (the skill's `requires_role`, else the task's, else
 * generalist), past the approval gate when those tools need one, through the one agent-call path.
 */
export async function runSkillWorkflow(deps: Deps, task: TaskSnapshot): Promise<TaskOutcome> {
  const skill = task.settings.skill;
  if (!skill) throw new Error('a skill task without its skill: the submission pins it in the task options');
  const tools = roleToolSet(deps.tools, task.tenantId, task.settings.role);
  const need = await announceSkill(deps, task, skill, tools);
  if (need) await passApprovalGate(deps, task, { ...need, action: { query: task.query, skill: `${skill.name}@${skill.version}` } });
  await checkpoint(deps, task, 'pre_execution');
  const system = buildSystemPrompt({ ...task.settings, systemPrompt: skill.instructions });
  const history = ownConversation(task) ?? await prepareSessionContext(deps, task, system);
  const answer = await runBudgetedAgent(deps, task, async () => skillAgentCall(task, skill, system, history, tools), SKILL_AGENT_ID);
  return {
    mode: SKILL_MODE, answer, agentsUsed: 1, complexityScore: null,
    metadata: { skill: { name: skill.name, version: skill.version, content_hash: skill.content_hash } },
  };
}

/**
 * ROLE_ASSIGNED names the skill, its role and the tools its agent is offered; whether those need approval is
 * judged in the same step, so a replay decides the same.
 */
async function announceSkill(deps: Deps, task: TaskSnapshot, skill: PinnedSkill, tools: AgentTools): Promise<ApprovalNeed | undefined> {
  const offered = tools.offered.map((tool) => tool.name);
  const need = await runTaskStep(deps, 'announce-skill', async (): Promise<ApprovalNeed | null> => {
    await appendEvents(deps, task.id, 'workflow', [{
      type: 'ROLE_ASSIGNED', agentId: SKILL_AGENT_ID, message: `Skill ${skill.name}@${skill.version} runs as role ${task.settings.role}`,
      payload: { skill: skill.name, skill_version: skill.version, role: task.settings.role, tools: offered }, dedupeKey: 'skill-assigned',
    }]);
    return approvalNeed(deps, task, { complexityScore: null, offeredTools: offered }) ?? null;
  });
  return recordedApprovalNeed(need);
}

function skillAgentCall(task: TaskSnapshot, skill: PinnedSkill, system: string, history: SessionContext, tools: AgentTools): AgentCall {
  return {
    agentId: SKILL_AGENT_ID,
    progress: `Running skill ${skill.name}@${skill.version}`,
    finalAnswer: true,
    maxOutputTokens: task.settings.maxOutputTokens,
    system: withConversationSummary(system, history.summary),
    messages: [...history.messages, { role: 'user', content: task.query }],
    tools,
  };
}
