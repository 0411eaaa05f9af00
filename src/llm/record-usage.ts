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
 * replaces its row rather than counting twice. `releasing`: the call's token reservation, kept under the same key,
 * is deleted by the same statement (the usage now counts in its place).
 */
export async function recordUsage(db: Db, callKey: string, owner: UsageOwner, agentId: string, result: ModelTextResult, { releasing = false } = {}): Promise<void> {
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
  // The CTE only adds a name the insert does not use: typed as the statement without it (as in task-state/lifecycle.ts).
  const writer: Pick<Db, 'insertInto'> = releasing
    ? db.with('released', (inner) => inner.deleteFrom('token_reservations').where('call_key', '=', callKey)) as unknown as Db
    : db;
  await writer.insertInto('usage_records').values(row)
    .onConflict((conflict) => conflict.column('call_key').doUpdateSet(row))
    .execute();
}
