import pg from 'pg';

export interface HeldInserts {
  /** True while an insert is waiting at the hold. */
  waiting(): Promise<boolean>;
  /** Lets the held inserts (and later ones) through and removes the hold; safe to call twice. */
  release(): Promise<void>;
}

/**
 * Holds every insert into `table` (that matches `when`, a trigger condition on `new`) inside its transaction until
 * released: a trigger waits for an advisory lock that this helper holds. `lockKey` keeps holds of one test apart.
 */
export async function holdInserts(databaseUrl: string, table: string, { when = 'true', lockKey }: { when?: string; lockKey: number }): Promise<HeldInserts> {
  const holder = new pg.Client({ connectionString: databaseUrl });
  await holder.connect();
  const name = `hold_insert_${lockKey}`;
  await holder.query(`
    create function ${name}() returns trigger language plpgsql as $$
    begin perform pg_advisory_xact_lock(${lockKey}); return new; end $$;
    create trigger ${name} before insert on ${table} for each row when (${when}) execute function ${name}()`);
  await holder.query('select pg_advisory_lock($1)', [lockKey]);
  let released = false;
  return {
    async waiting() {
      const { rows } = await holder.query(`select count(*)::int as count from pg_locks where locktype = 'advisory' and objid = $1 and not granted`, [lockKey]);
      return rows[0].count > 0;
    },
    async release() {
      if (released) return;
      released = true;
      await holder.query('select pg_advisory_unlock($1)', [lockKey]);
      await holder.query(`drop trigger ${name} on ${table}; drop function ${name}()`);
      await holder.end();
    },
  };
}
