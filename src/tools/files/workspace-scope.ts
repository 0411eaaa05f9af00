import { isUuid } from '../../uuid.ts';
import type { ToolContext } from '../registry.ts';
import type { WorkspaceFileInfo, WorkspaceScope } from './workspace-store.ts';

/** The workspace a file tool works in: the call's session. A call without one (the tools API with no session_id) fails. */
export function workspaceOf(context: ToolContext): WorkspaceScope {
  if (context.sessionId === null) {
    throw new Error('file tools work in a session\'s workspace and this call has no session: call them from a task, or give a session_id');
  }
  if (!isUuid(context.sessionId)) throw new Error(`the session of a file tool call must be given by its UUID (got ${JSON.stringify(context.sessionId)})`);
  return { sessionId: context.sessionId.toLowerCase(), tenantId: context.tenantId };
}

/** The JSON schema of a `path` argument; the normaliser (workspace-path.ts) decides what is valid. */
export const PATH_PARAMETER = {
  type: 'string', minLength: 1, maxLength: 1024,
  description: 'A relative path in the session workspace, with "/" between directories, e.g. "notes/plan.md"',
} as const;

/** How the file tools describe a file they changed. */
export const fileView = (file: WorkspaceFileInfo) => ({ path: file.path, size: file.size, sha256: file.sha256 });
