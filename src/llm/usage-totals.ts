import { sql, type RawBuilder } from 'kysely';

export type UsageOwner = 'task_id' | 'session_id';

/**
 * The sums of the usage rows of one task's or one session's calls: the one definition that totals and listings
 * share (a model call's budgets are read in SQL, migration 0040's budget_usage, in the statement that locks them).
 * A query with one row (zeros when there are none, and `calls` to tell); use it as a lateral subquery
 * (`left join lateral (...) usage on true`) or select from it. A session's rows include its own calls (the title),
 * which no task has.
 */
export function usageTotals(owner: UsageOwner, id: RawBuilder<unknown> | string): RawBuilder<unknown> {
  return sql`select count(*)::int as calls,
      coalesce(sum(input_tokens), 0)::int8 as input_tokens, coalesce(sum(output_tokens), 0)::int8 as output_tokens,
      coalesce(sum(total_tokens), 0)::int8 as total_tokens, coalesce(sum(cost_usd), 0)::float8 as cost_usd,
      coalesce(sum(cached_input_tokens), 0)::int8 as cached_input_tokens
    from usage_records where ${sql.ref(`usage_records.${owner}`)} = ${id}`;
}

/** Tokens set aside by calls in flight, which budgets count as spent. */
function reservedTokens(owner: UsageOwner, id: RawBuilder<unknown> | string): RawBuilder<unknown> {
  return sql`(select coalesce(sum(tokens), 0)::int8 from token_reservations where ${sql.ref(`token_reservations.${owner}`)} = ${id})`;
}

/** Spent (usage) plus reserved tokens: what a budget has used (the session titler's room). */
export function usedTokens(owner: UsageOwner, id: RawBuilder<unknown> | string): RawBuilder<unknown> {
  return sql`((select total_tokens from (${usageTotals(owner, id)}) usage) + ${reservedTokens(owner, id)})`;
}
