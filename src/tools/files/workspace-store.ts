import { isUtf8 } from 'node:buffer';
import { sql } from 'kysely';
import type { Config } from '../../config.ts';
import type { Db } from '../../db/database.ts';

/** Whose workspace: a session (its UUID) of a tenant. Every query is scoped by both. */
export interface WorkspaceScope {
  sessionId: string;
  tenantId: string;
}

export type WorkspaceQuota = Config['workspace'];

export interface WorkspaceFileInfo {
  path: string;
  size: number;
  sha256: string;
  /** Valid UTF-8 without NUL: read by lines, searched, served as text/plain. */
  isText: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface WorkspaceFile extends WorkspaceFileInfo {
  content: Buffer;
}

/** The new content of a file from its current one (undefined when it does not exist yet); may throw to refuse. */
export type FileChange = (current: WorkspaceFile | undefined) => Buffer;

const INFO_COLUMNS = ['session_files.path', 'session_files.size', 'session_files.sha256', 'session_files.is_text', 'session_files.created_at', 'session_files.updated_at'] as const;

function filesOf(db: Db, scope: WorkspaceScope) {
  return db.selectFrom('session_files')
    .innerJoin('sessions', 'sessions.id', 'session_files.session_id')
    .where('session_files.session_id', '=', scope.sessionId)
    .where('sessions.tenant_id', '=', scope.tenantId);
}

export async function readWorkspaceFile(db: Db, scope: WorkspaceScope, path: string): Promise<WorkspaceFile | undefined> {
  const row = await filesOf(db, scope).select([...INFO_COLUMNS, 'session_files.content'])
    .where('session_files.path', '=', path).executeTakeFirst();
  return row && { ...toInfo(row), content: row.content };
}

/** The files whose path starts with the prefix (`''` for all), in path order. */
export async function listWorkspaceFiles(db: Db, scope: WorkspaceScope, prefix: string, page: { limit: number; offset: number }): Promise<WorkspaceFileInfo[]> {
  const rows = await filesOf(db, scope).select(INFO_COLUMNS)
    .where(sql<boolean>`starts_with(session_files.path, ${prefix})`)
    .orderBy('session_files.path').limit(page.limit).offset(page.offset).execute();
  return rows.map(toInfo);
}

export async function measureWorkspace(db: Db, scope: WorkspaceScope, prefix = ''): Promise<{ files: number; bytes: number }> {
  return filesOf(db, scope)
    .select((eb) => [eb.fn.countAll<number>().as('files'), eb.fn.coalesce(eb.fn.sum<number>('session_files.size'), eb.lit(0)).as('bytes')])
    .where(sql<boolean>`starts_with(session_files.path, ${prefix})`)
    .executeTakeFirstOrThrow();
}

export interface WrittenFile { file: WorkspaceFileInfo; created: boolean }

/** Work that must commit with a change (a tool records its call: ToolContext.recordCall), given its result. */
export type WithChange<T> = (transaction: Db, result: T) => Promise<void> | undefined;

/**
 * Writes a file from its current content, under the session's row lock: concurrent writers of one workspace
 * (tasks in several processes) take turns, so neither an edit is lost nor a quota overrun by two writes that
 * each fitted alone. `FOR NO KEY UPDATE` leaves the row's key free: tasks can still be added to the session.
 * `withChange` runs in the same transaction, once the file is written.
 */
export async function writeWorkspaceFile(
  db: Db, scope: WorkspaceScope, quota: WorkspaceQuota, path: string, change: FileChange, withChange?: WithChange<WrittenFile>,
): Promise<WrittenFile> {
  return db.transaction().execute(async (transaction) => {
    await lockWorkspace(transaction, scope);
    const current = await readWorkspaceFile(transaction, scope, path);
    const content = change(current);
    await checkQuota(transaction, scope, quota, path, content.length);
    const row = await transaction.insertInto('session_files')
      .values({ session_id: scope.sessionId, path, content, is_text: isText(content) })
      .onConflict((conflict) => conflict.columns(['session_id', 'path']).doUpdateSet((update) => ({
        content: update.ref('excluded.content'), is_text: update.ref('excluded.is_text'), updated_at: sql`now()` as never,
      })))
      .returning(['path', 'size', 'sha256', 'is_text', 'created_at', 'updated_at'])
      .executeTakeFirstOrThrow();
    const written = { file: toInfo(row), created: current === undefined };
    await withChange?.(transaction, written);
    return written;
  });
}

/** Fails when there is no such file; `withChange` runs in the transaction that deleted it. */
export async function deleteWorkspaceFile(db: Db, scope: WorkspaceScope, path: string, withChange?: WithChange<string>): Promise<void> {
  return db.transaction().execute(async (transaction) => {
    await lockWorkspace(transaction, scope);
    const deleted = await transaction.deleteFrom('session_files')
      .where('session_id', '=', scope.sessionId).where('path', '=', path).executeTakeFirst();
    if (deleted.numDeletedRows === 0n) throw new Error(`no such file: ${path}`);
    await withChange?.(transaction, path);
  });
}

async function lockWorkspace(transaction: Db, scope: WorkspaceScope): Promise<void> {
  const session = await transaction.selectFrom('sessions').select('id')
    .where('id', '=', scope.sessionId).where('tenant_id', '=', scope.tenantId)
    .forNoKeyUpdate().executeTakeFirst();
  if (!session) throw new Error(`session ${scope.sessionId} does not exist: it has no workspace`);
}

async function checkQuota(transaction: Db, scope: WorkspaceScope, quota: WorkspaceQuota, path: string, size: number): Promise<void> {
  if (size > quota.maxFileBytes) {
    throw new Error(`${path} would be ${size} bytes: a workspace file may hold at most ${quota.maxFileBytes} bytes`);
  }
  const others = await transaction.selectFrom('session_files')
    .select((eb) => [eb.fn.countAll<number>().as('files'), eb.fn.coalesce(eb.fn.sum<number>('size'), eb.lit(0)).as('bytes')])
    .where('session_id', '=', scope.sessionId).where('path', '!=', path)
    .executeTakeFirstOrThrow();
  if (others.files + 1 > quota.maxFiles) {
    throw new Error(`the workspace holds ${others.files} files and may hold at most ${quota.maxFiles}: delete files to make room`);
  }
  if (others.bytes + size > quota.maxBytes) {
    throw new Error(`the workspace would hold ${others.bytes + size} bytes, the most it may hold is ${quota.maxBytes}: delete files to make room`);
  }
}

const isText = (content: Buffer) => isUtf8(content) && !content.includes(0);

function toInfo(row: { path: string; size: number; sha256: string; is_text: boolean; created_at: Date; updated_at: Date }): WorkspaceFileInfo {
  return { path: row.path, size: row.size, sha256: row.sha256, isText: row.is_text, createdAt: row.created_at, updatedAt: row.updated_at };
}
