import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { toAgentView } from './agent-view.ts';

/**
 * GET /agents/sync (spec 4.9): the caller's tenant's mirror of the catalogue, brought up to date first in one
 * transaction: a new agent is added, a changed one updated (its version raised), one back in the catalogue
 * restored, and one gone from it marked deleted and kept as a tombstone. Tenants read the mirror; they do not
 * add or override agents (docs/decisions.md, issue 29).
 */
export async function syncAgents(deps: Deps, caller: Caller) {
  const catalogue = deps.agents.list().map((agent) => {
    const config = toAgentView(agent);
    return { agent_key: agent.id, config, config_hash: createHash('sha256').update(JSON.stringify(config)).digest('hex') };
  });
  const rows = await deps.db.transaction().execute(async (transaction) => {
    for (const entry of catalogue) {
      await transaction.insertInto('agent_mirror')
        .values({ tenant_id: caller.tenantId, agent_key: entry.agent_key, config: JSON.stringify(entry.config), config_hash: entry.config_hash, deleted_at: null })
        .onConflict((conflict) => conflict.columns(['tenant_id', 'agent_key']).doUpdateSet({
          config: (expression) => expression.ref('excluded.config'),
          config_hash: (expression) => expression.ref('excluded.config_hash'),
          version: sql`agent_mirror.version + 1`,
          updated_at: sql`now()`,
          deleted_at: null,
        }).where((where) => where.or([
          where('agent_mirror.config_hash', '<>', where.ref('excluded.config_hash')),
          where('agent_mirror.deleted_at', 'is not', null),
        ])))
        .execute();
    }
    let removed = transaction.updateTable('agent_mirror').set({ deleted_at: sql`now()`, updated_at: sql`now()`, version: sql`version + 1` })
      .where('tenant_id', '=', caller.tenantId).where('deleted_at', 'is', null);
    if (catalogue.length > 0) removed = removed.where('agent_key', 'not in', catalogue.map((entry) => entry.agent_key));
    await removed.execute();
    return transaction.selectFrom('agent_mirror').selectAll().where('tenant_id', '=', caller.tenantId).orderBy('agent_key').execute();
  });
  const agents = rows.map((row) => ({
    agent_key: row.agent_key, tenant_id: row.tenant_id, config: row.config, version: row.version,
    created_at: row.created_at.toISOString(), updated_at: row.updated_at.toISOString(),
    deleted_at: row.deleted_at?.toISOString() ?? null, is_deleted: row.deleted_at !== null,
  }));
  return { agents, count: agents.length };
}
