import type { ToolDefinition } from '../registry.ts';
import { normalizeWorkspacePath } from './workspace-path.ts';
import { PATH_PARAMETER, workspaceOf } from './workspace-scope.ts';
import { deleteWorkspaceFile } from './workspace-store.ts';

export const fileDeleteTool: ToolDefinition = {
  name: 'file_delete',
  description: 'Deletes one file of the session workspace (directories disappear with their last file).',
  parameters: {
    type: 'object',
    properties: { path: PATH_PARAMETER },
    required: ['path'],
    additionalProperties: false,
  },
  category: 'files',
  costPerUseUsd: 0,
  dangerous: true,
  async execute(input, context) {
    const path = normalizeWorkspacePath(String(input.path));
    if (!await deleteWorkspaceFile(context.db, workspaceOf(context), path)) throw new Error(`no such file: ${path}`);
    return { path, deleted: true };
  },
};
