import { sql, type RawBuilder } from 'kysely';
import type { Db } from '../../db/database.ts';
import type { WorkspaceScope } from './workspace-store.ts';

export interface SearchQuery {
  pattern: string;
  isRegex: boolean;
  ignoreCase: boolean;
  /** Path prefix (`''` for the whole workspace). */
  prefix: string;
  limit: number;
}

export interface SearchMatch {
  path: string;
  line: number;
  text: string;
}

/**
 * A search runs in the database, under its own short statement timeout: a pathological regular expression
 * costs one database backend at most that long and never blocks this process's event loop (a JavaScript
 * RegExp would), and the workspace's content is not copied out to be scanned.
 */
const SEARCH_TIMEOUT_MS = 3000;

/** Lines of text files that match, in path and line order; at most `limit` of them. */
export async function searchWorkspace(db: Db, scope: WorkspaceScope, query: SearchQuery): Promise<SearchMatch[]> {
  try {
    return await db.transaction().execute(async (transaction) => {
      await sql.raw(`set local statement_timeout = ${SEARCH_TIMEOUT_MS}`).execute(transaction);
      const { rows } = await sql<{ path: string; line: number; text: string }>`
        select f.path, l.line_number::int as line, l.line_text as text
        from session_files f
        join sessions s on s.id = f.session_id
        cross join lateral string_to_table(convert_from(f.content, 'UTF8'), E'\n') with ordinality as l(line_text, line_number)
        where f.session_id = ${scope.sessionId} and s.tenant_id = ${scope.tenantId} and f.is_text
          and starts_with(f.path, ${query.prefix}) and ${lineMatches(query)}
        order by f.path, l.line_number
        limit ${query.limit}`.execute(transaction);
      return rows;
    });
  } catch (error) {
    throw searchError(error);
  }
}

function lineMatches(query: SearchQuery): RawBuilder<boolean> {
  if (query.isRegex) return query.ignoreCase ? sql`l.line_text ~* ${query.pattern}` : sql`l.line_text ~ ${query.pattern}`;
  return query.ignoreCase
    ? sql`strpos(lower(l.line_text), lower(${query.pattern})) > 0`
    : sql`strpos(l.line_text, ${query.pattern}) > 0`;
}

/** The database's own words for a bad pattern ("invalid regular expression: …"); a timeout said plainly. */
function searchError(error: unknown): unknown {
  const code = (error as { code?: string }).code;
  if (code === '2201B') return new Error((error as Error).message);
  if (code === '57014') return new Error(`the search took longer than ${SEARCH_TIMEOUT_MS / 1000} s: use a simpler pattern or a narrower directory`);
  return error;
}
