import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { normalizeWorkspacePath, WorkspacePathError } from '../tools/files/workspace-path.ts';
import {
  listWorkspaceFiles, measureWorkspace, readWorkspaceFile, type WorkspaceFile, type WorkspaceFileInfo, type WorkspaceScope,
} from '../tools/files/workspace-store.ts';
import type { ListSessionFilesResponse, SessionFileView } from './files-schemas.ts';
import { findOwnedSession } from './queries.ts';

/** GET /api/v1/sessions/{id}/files: the workspace the session's file tools wrote, in path order. */
export async function listSessionFiles(deps: Deps, caller: Caller, sessionId: string, page: { limit: number; offset: number }): Promise<Static<typeof ListSessionFilesResponse>> {
  const scope = await ownedWorkspace(deps, caller, sessionId);
  const [files, totals] = await Promise.all([listWorkspaceFiles(deps.db, scope, '', page), measureWorkspace(deps.db, scope)]);
  return { session_id: scope.sessionId, files: files.map(toFileView), total_count: totals.files, total_bytes: totals.bytes };
}

/** GET /api/v1/sessions/{id}/files/{path}: one file with its content; 404 when there is none at that path. */
export async function getSessionFile(deps: Deps, caller: Caller, sessionId: string, rawPath: string): Promise<WorkspaceFile> {
  const scope = await ownedWorkspace(deps, caller, sessionId);
  const file = await readWorkspaceFile(deps.db, scope, parsePath(rawPath));
  if (!file) throw notFound('File not found');
  return file;
}

export const contentTypeOf = (file: WorkspaceFileInfo) => (file.isText ? 'text/plain; charset=utf-8' : 'application/octet-stream');

async function ownedWorkspace(deps: Deps, caller: Caller, sessionId: string): Promise<WorkspaceScope> {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  return { sessionId: session.id, tenantId: caller.tenantId };
}

function parsePath(rawPath: string): string {
  try {
    return normalizeWorkspacePath(rawPath);
  } catch (error) {
    if (error instanceof WorkspacePathError) throw badRequest(error.message);
    throw error;
  }
}

function toFileView(file: WorkspaceFileInfo): Static<typeof SessionFileView> {
  return {
    path: file.path, size: file.size, sha256: file.sha256, content_type: contentTypeOf(file),
    created_at: file.createdAt.toISOString(), updated_at: file.updatedAt.toISOString(),
  };
}
