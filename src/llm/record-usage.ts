import type { Db } from '../db/database.ts';
import type { ModelTextResult } from './stream-model-text.ts';

export interface UsageOwner {
  /** Null for a call of the session itself (its title). */
  taskId: string | null;
  tenantId: string;
  userId: string;
  sessionId: string;
}

/**
 * One row per model call. `callKey` is stable for the call site, so a call repeated after a crash
 * replaces its row rather than counting twice.
 */
export async function recordUsage(db: Db, callKey: string, owner: UsageOwner, agentId: string, result: ModelTextResult): Promise<void> {
  await usageRecordWrite(db, callKey, owner, agentId, result).execute();
}

/** recordUsage's statement, not yet run: a caller may make it part of a larger statement (a CTE). */
export function usageRecordWrite(db: Pick<Db, 'insertInto'>, callKey: string, owner: UsageOwner, agentId: string, result: ModelTextResult) {
  const row = {
    call_key: callKey,
    task_id: owner.taskId,
    tenant_id: owner.tenantId,
    user_id: owner.userId,
    session_id: owner.sessionId,
    agent_id: agentId,
    provider: result.provider,
    model: result.model,
    input_tokens: result.inputTokens,
    output_tokens: result.outputTokens,
    total_tokens: result.inputTokens + result.outputTokens,
    cached_input_tokens: result.cachedInputTokens ?? 0,
    cache_write_tokens: result.cacheWriteTokens ?? 0,
    cost_usd: result.costUsd,
  };
  return db.insertInto('usage_records').values(row).onConflict((conflict) => conflict.column('call_key').doUpdateSet(row));
}
