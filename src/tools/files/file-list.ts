import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspaceDirectory } from './workspace-path.ts';
import { workspaceOf } from './workspace-scope.ts';
import { listWorkspaceFiles, measureWorkspace } from './workspace-store.ts';

/** Entries one listing returns; the totals still count every file under the directory. */
const MAX_ENTRIES = 200;

export const fileListTool: ToolDefinition = {
  name: 'file_list',
  description: 'Lists the files of the session workspace under a directory (all of them when none is given), recursively, '
    + 'in path order, with their size and last change.',
  parameters: {
    type: 'object',
    properties: {
      directory: { type: 'string', maxLength: 1024, description: 'A relative directory, e.g. "notes"; "" or "." for the whole workspace' },
    },
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: false,
  effects: 'none',
  async execute(input, context) {
    const prefix = normalizeWorkspaceDirectory(input.directory === undefined ? undefined : String(input.directory));
    const scope = workspaceOf(context);
    const [files, totals] = await Promise.all([
      listWorkspaceFiles(context.db, scope, prefix, { limit: MAX_ENTRIES, offset: 0 }),
      measureWorkspace(context.db, scope, prefix),
    ]);
    return {
      directory: prefix === '' ? '.' : prefix.slice(0, -1),
      files: files.map((file) => ({ path: file.path, size: file.size, updated_at: file.updatedAt.toISOString() })),
      total_files: totals.files,
      total_bytes: totals.bytes,
      ...(totals.files > files.length ? { truncated: `only the first ${files.length} files are listed` } : {}),
    };
  },
};
