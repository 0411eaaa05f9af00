import { workspaceOf } from '../files/workspace-scope.ts';
import { listWorkspaceFiles, readWorkspaceFile } from '../files/workspace-store.ts';
import type { ToolContext } from '../registry.ts';

/** A file copied into the sandbox: a normalised workspace path (relative, no `..`), and its bytes. */
export interface SandboxFile {
  path: string;
  content: Uint8Array;
}

/** Every file of the call's session workspace, as it is now; the quota bounds how many and how large. */
export async function readWorkspaceSnapshot(context: ToolContext): Promise<SandboxFile[]> {
  const scope = workspaceOf(context);
  const listed = await listWorkspaceFiles(context.db, scope, '', { limit: context.settings.workspace.maxFiles, offset: 0 });
  const files = await Promise.all(listed.map((info) => readWorkspaceFile(context.db, scope, info.path)));
  // A file deleted between the listing and its reading is simply not there.
  return files.flatMap((file) => (file ? [{ path: file.path, content: new Uint8Array(file.content) }] : []));
}
