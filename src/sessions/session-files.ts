import type { Static } from 'typebox';
import type { Caller } from '../auth/caller.ts';
import type { Deps } from '../deps.ts';
import { badRequest, notFound } from '../errors.ts';
import { normalizeWorkspaceDirectory, normalizeWorkspacePath, WorkspacePathError } from '../tools/files/workspace-path.ts';
import {
  listWorkspaceFiles, measureWorkspace, readWorkspaceFile, type WorkspaceFile, type WorkspaceFileInfo, type WorkspaceScope,
} from '../tools/files/workspace-store.ts';
import type { ListSessionFilesResponse, SessionFileView } from './files-schemas.ts';
import { findOwnedSession } from './queries.ts';

/**
 * GET /api/v1/sessions/{id}/files: the workspace the session's file tools wrote, in path order; with `path`, the
 * files under that directory. Totals are of what is listed (the directory, or the whole workspace).
 */
export async function listSessionFiles(
  deps: Deps, caller: Caller, sessionId: string, query: { path?: string; limit: number; offset: number },
): Promise<Static<typeof ListSessionFilesResponse>> {
  const scope = await ownedWorkspace(deps, caller, sessionId);
  const directory = parsePath(query.path, normalizeWorkspaceDirectory);
  const [files, totals] = await Promise.all([listWorkspaceFiles(deps.db, scope, directory, query), measureWorkspace(deps.db, scope, directory)]);
  return { success: true, session_id: scope.sessionId, files: files.map(toFileView), total_count: totals.files, total_bytes: totals.bytes };
}

/** GET /api/v1/sessions/{id}/files/{path}: one file with its content; 404 when there is none at that path. */
export async function getSessionFile(deps: Deps, caller: Caller, sessionId: string, rawPath: string): Promise<WorkspaceFile> {
  const scope = await ownedWorkspace(deps, caller, sessionId);
  const file = await readWorkspaceFile(deps.db, scope, parsePath(rawPath, normalizeWorkspacePath));
  if (!file) throw notFound('File not found');
  return file;
}

export const contentTypeOf = (file: WorkspaceFileInfo) => (file.isText ? 'text/plain; charset=utf-8' : 'application/octet-stream');

async function ownedWorkspace(deps: Deps, caller: Caller, sessionId: string): Promise<WorkspaceScope> {
  const session = await findOwnedSession(deps.db, caller, sessionId);
  return { sessionId: session.id, tenantId: caller.tenantId };
}

/**
 * Shannon's clients read a download as JSON, `{success, content, content_type, size_bytes}` (its Python SDK sends
 * `Content-Type: application/json` on every request and accepts anything); ours, browsers and curl read the bytes.
 * So the envelope goes to a request whose Accept names application/json, or that says it speaks JSON and accepts
 * anything; every other request gets the bytes.
 */
export function wantsJsonFile(request: { headers: { accept?: string }; bodylessContentType?: string }): boolean {
  const accept = request.headers.accept ?? '*/*';
  if (/application\/json/i.test(accept)) return true;
  return accept.trim() === '*/*' && /^application\/json\b/i.test(request.bodylessContentType ?? '');
}

/** The JSON form of a download: text as it is, anything else in base64. */
export function jsonFile(file: WorkspaceFile) {
  return {
    success: true, path: file.path, content: file.content.toString(file.isText ? 'utf8' : 'base64'),
    encoding: file.isText ? 'utf-8' : 'base64', content_type: contentTypeOf(file), size_bytes: file.size,
  };
}

function parsePath(rawPath: string | undefined, normalize: (path: string) => string): string {
  if (rawPath === undefined) return '';
  try {
    return normalize(rawPath);
  } catch (error) {
    if (error instanceof WorkspacePathError) throw badRequest(error.message);
    throw error;
  }
}

function toFileView(file: WorkspaceFileInfo): Static<typeof SessionFileView> {
  return {
    path: file.path, name: file.path.slice(file.path.lastIndexOf('/') + 1), is_dir: false, size: file.size, size_bytes: file.size,
    sha256: file.sha256, content_type: contentTypeOf(file),
    created_at: file.createdAt.toISOString(), updated_at: file.updatedAt.toISOString(),
  };
}
