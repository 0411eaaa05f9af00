import type pg from 'pg';

const TOP_STATEMENTS = 30;
const QUERY_PREFIX_CHARS = 110;

interface StatementRow {
  calls: string;
  total_ms: number;
  mean_ms: number;
  query: string;
}

/**
 * The statements that cost Postgres the most (pg_stat_statements, loaded by the caller), as a Markdown table with
 * how often each ran per `unit` (a task, a request): `count` of them ran.
 */
export async function statementTable(pool: pg.Pool, count: number, unit: string): Promise<string> {
  const { rows } = await pool.query<StatementRow>(`
    select calls::text, total_exec_time as total_ms, mean_exec_time as mean_ms,
           regexp_replace(left(query, $1), '\\s+', ' ', 'g') as query
    from pg_stat_statements where dbid = (select oid from pg_database where datname = current_database())
      and query not like '%pg_stat_statements%'
    order by total_exec_time desc`, [QUERY_PREFIX_CHARS]);
  const totalMs = rows.reduce((sum, row) => sum + row.total_ms, 0);
  const totalCalls = rows.reduce((sum, row) => sum + Number(row.calls), 0);
  const lines = rows.slice(0, TOP_STATEMENTS).map((row) => `| ${[
    (Number(row.calls) / count).toFixed(2), row.mean_ms.toFixed(3), row.total_ms.toFixed(0),
    `${((100 * row.total_ms) / totalMs).toFixed(1)} %`, `\`${row.query.replaceAll('|', '\\|')}\``,
  ].join(' | ')} |`);
  return [
    `${count} ${unit}s; ${(totalCalls / count).toFixed(1)} statements and ${(totalMs / count).toFixed(2)} ms of statement time per ${unit}.`,
    '',
    `| calls per ${unit} | mean ms | total ms | share | statement |`,
    '| --- | --- | --- | --- | --- |',
    ...lines,
  ].join('\n');
}
