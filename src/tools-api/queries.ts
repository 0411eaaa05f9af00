import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Db } from '../db/database.ts';
import type { ToolDefinition } from '../tools/registry.ts';

/**
 * A direct call's cost, as a usage row of the caller (and of the session it named), so it counts in their
 * usage like a model call: no task, no tokens (a tool spends none, and tokens count against budgets).
 * Raw SQL because the row may have no session (migration 0018).
 */
export async function insertToolUsage(db: Db, caller: Caller, tool: ToolDefinition, sessionId: string | null): Promise<void> {
  await sql`insert into usage_records
      (call_key, task_id, tenant_id, user_id, session_id, agent_id, provider, model, input_tokens, output_tokens, total_tokens, cost_usd)
    values (${`tool:${randomUUID()}`}, null, ${caller.tenantId}, ${caller.userId}, ${sessionId}, ${`tool:${tool.name}`}, 'tool', ${tool.name},
      0, 0, 0, ${tool.costPerUseUsd})`.execute(db);
}
