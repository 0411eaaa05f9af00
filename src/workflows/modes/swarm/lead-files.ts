import type { Deps } from '../../../deps.ts';
import { listWorkspaceFiles, readWorkspaceFile } from '../../../tools/files/workspace-store.ts';
import type { TaskSnapshot } from '../../runtime/task-snapshot.ts';
import type { LeadDecision } from './swarm-answers.ts';

/** The lead's file_read (reference §1.10): per decision, up to 3 reads of up to 3 files each, 4,000 characters of each. */
export const LEAD_FILE_READS = { reads: 3, files: 3, chars: 4000 } as const;
/** How many of the session workspace's paths the lead is shown. */
const LISTED_PATHS = 50;

/** A file the lead read: its start, or why it could not be read. */
export interface LeadFile { path: string; content?: string; error?: string }

/** The paths a decision asks to read, when it asks (its other actions wait for the decision made with the files). */
export function pathsToRead(decision: LeadDecision): string[] {
  const paths = decision.actions.filter((action) => action.type === 'file_read').flatMap((action) => action.paths ?? []);
  return [...new Set(paths.map((path) => path.trim().replace(/^\/+/, '')).filter(Boolean))].slice(0, LEAD_FILE_READS.files);
}

/** Paths in the task's session workspace (the agents' findings among them), for the lead to choose from. */
export async function listSessionFiles(deps: Deps, task: TaskSnapshot): Promise<string[]> {
  const files = await listWorkspaceFiles(deps.db, { sessionId: task.sessionId, tenantId: task.tenantId }, '', { limit: LISTED_PATHS, offset: 0 });
  return files.map((file) => file.path);
}

export function readSessionFiles(deps: Deps, task: TaskSnapshot, paths: string[]): Promise<LeadFile[]> {
  return Promise.all(paths.map(async (path): Promise<LeadFile> => {
    const file = await readWorkspaceFile(deps.db, { sessionId: task.sessionId, tenantId: task.tenantId }, path);
    if (!file) return { path, error: 'no such file in the session workspace' };
    if (!file.isText) return { path, error: `not a text file (${file.size} bytes)` };
    return { path, content: file.content.toString('utf8').slice(0, LEAD_FILE_READS.chars) };
  }));
}
